// Reasoning in the run state: blocks kept with their answer, reasoning tokens summed, both surviving a checkpoint's
// JSON round trip, within schema version 2 (optional fields: older states read as having none).
import { describe, expect, it } from 'vitest';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../spec/model.js';
import { agent } from '../agent.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from '../run/run-state.js';
import { tool } from '../tools/tool.js';
import { migrateRunState } from './run-state-migrations.js';

function modelOf(responses: ModelResponse[], seen: ModelRequest[] = []): ModelProvider {
  return {
    provider: 'test',
    model: 'thinker',
    async generate(request) {
      seen.push({ ...request, messages: structuredClone(request.messages) });
      return responses[seen.length - 1]!;
    },
  };
}

const lookup = tool({
  name: 'lookup',
  description: 'looks up',
  input: { type: 'object', properties: {} },
  execute: () => 'found',
});

describe('reasoning in the run state', () => {
  it('keeps reasoning blocks with their answer and sums reasoning tokens, through a checkpoint round trip', async () => {
    const saved: string[] = [];
    const seen: ModelRequest[] = [];
    const reasoning = [
      { type: 'thinking' as const, text: 'Look it up.', signature: 'sig-1' },
      { type: 'redacted_thinking' as const, data: 'opaque' },
    ];
    const result = await agent({
      model: modelOf(
        [
          {
            content: '',
            toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}', providerMetadata: { g: { s: 'ts' } } }],
            reasoning,
            finishReason: 'tool_calls',
            usage: { inputTokens: 10, outputTokens: 40, reasoningTokens: 30 },
            model: 'thinker',
          },
          {
            content: 'done',
            toolCalls: [],
            finishReason: 'stop',
            usage: { inputTokens: 20, outputTokens: 5, reasoningTokens: 2 },
            model: 'thinker',
          },
        ],
        seen,
      ),
      tools: [lookup],
      checkpoint: (_transition, state) => {
        saved.push(JSON.stringify(state));
      },
    }).run('Find it');
    expect(result.status).toBe('completed');
    expect(result.report.usage).toEqual({ inputTokens: 30, outputTokens: 45, reasoningTokens: 32 });
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 45, reasoningTokens: 32 });
    // The second request carries the first answer's reasoning and the call's provider metadata, as they came.
    expect(seen[1]!.messages[1]).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}', providerMetadata: { g: { s: 'ts' } } }],
      reasoning,
    });
    const restored = migrateRunState(JSON.parse(saved.at(-1)!), result.runId);
    expect(restored.schemaVersion).toBe(RUN_STATE_SCHEMA_VERSION);
    expect(restored.messages).toEqual(result.messages);
    expect(restored.report.usage.reasoningTokens).toBe(32);
  });

  it('leaves usage as it was when no model counts reasoning tokens, and reads such states', async () => {
    let state: RunState | undefined;
    const result = await agent({
      model: modelOf([
        {
          content: 'hi',
          toolCalls: [],
          finishReason: 'stop',
          usage: { inputTokens: 1, outputTokens: 1 },
          model: 'm',
        },
      ]),
      checkpoint: (_transition, current) => {
        state = JSON.parse(JSON.stringify(current)) as RunState;
      },
    }).run('Hi');
    expect(result.report.usage).toEqual({ inputTokens: 1, outputTokens: 1 });
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'hi' });
    expect(migrateRunState(state).usage).toEqual({ inputTokens: 1, outputTokens: 1 });
  });
});
