// The durable run the checkpoint benchmark measures: a model that calls the idempotent `lookup` tool each step and
// then answers, reading only the last message so that it costs the same at any length, and the run's input.
import {
  agent,
  type Message,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type RunStore,
} from '@keel/core';
import { lookupTool } from './step-agent.js';

/** Something that runs a case once. */
export type Runner = () => Promise<void>;

/**
 * A model that calls `lookup` each step until `steps - 1` results are in, then answers; it reads only the last
 * message (its call id says which step it answers), so the model costs the same at any length.
 */
export function linearModel(steps: number): ModelProvider {
  const usage = { inputTokens: 10, outputTokens: 5 };
  return {
    provider: 'bench',
    model: 'steps',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const last = request.messages.at(-1);
      const done = last?.role === 'tool' ? Number(last.toolCallId.slice('call_'.length)) + 1 : 0;
      if (done >= steps - 1)
        return { content: 'done', toolCalls: [], finishReason: 'stop', usage, model: 'steps' };
      const call = { id: `call_${done}`, name: 'lookup', arguments: `{"key":"k${done}"}` };
      return { content: '', toolCalls: [call], finishReason: 'tool_calls', usage, model: 'steps' };
    },
  };
}

/** `history` messages of an earlier conversation, then the run's question. */
export function inputOf(history: number): Message[] {
  const earlier: Message[] = Array.from({ length: history }, (_, index) =>
    index % 2 === 0
      ? { role: 'user', content: `question ${index}` }
      : { role: 'assistant', content: `answer ${index}` },
  );
  return [...earlier, { role: 'user', content: 'go' }];
}

/** keel's run of `steps` steps after `history` messages, with `store` (or none). */
export function keelRunner(store: RunStore | undefined, steps: number, history: number): Runner {
  const assistant = agent({
    model: linearModel(steps),
    tools: [lookupTool],
    limits: { maxTurns: steps + 2, timeoutMs: 3_600_000 },
    ...(store === undefined ? {} : { store }),
  });
  const input = inputOf(history);
  return async () => {
    const result = await assistant.run(input);
    if (result.status !== 'completed')
      throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
  };
}
