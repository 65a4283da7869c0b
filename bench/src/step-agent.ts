import type { ModelProvider, ModelRequest, ModelResponse } from '@keel/core';
import { tool } from '@keel/core';

/** The `lookup` tool made with a given `tool` factory (another build of keel's, for a side-by-side baseline). */
export function lookupToolOf(factory: typeof tool): ReturnType<typeof tool> {
  return factory({
    name: 'lookup',
    description: 'Looks a key up',
    input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    idempotent: true,
    execute: (input) => ({ value: (input as { key: string }).key }),
  });
}

/** An in-process tool that does almost nothing, so a benchmark measures keel rather than the tool. */
export const lookupTool = lookupToolOf(tool);

/** A model that calls `lookup` once a step until the conversation holds `steps - 1` tool results, then answers. */
export function stepModel(steps: number): ModelProvider {
  const usage = { inputTokens: 10, outputTokens: 5 };
  return {
    provider: 'bench',
    model: 'steps',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const toolResults = request.messages.filter((message) => message.role === 'tool').length;
      if (toolResults >= steps - 1)
        return { content: 'done', toolCalls: [], finishReason: 'stop', usage, model: 'steps' };
      const call = { id: `call_${toolResults}`, name: 'lookup', arguments: `{"key":"k${toolResults}"}` };
      return { content: '', toolCalls: [call], finishReason: 'tool_calls', usage, model: 'steps' };
    },
  };
}
