// Each model attempt and each tool call has a signal of its own (aborted at its timeout or the run's cancellation),
// made only when it is read: an AbortController costs microseconds, and in-process models and tools often never read
// theirs. The run's own abort switch makes none either unless something asks for its signal.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../spec/model.js';
import type { ToolContext } from '../../spec/tool.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { agent } from '../agent.js';
import { tool } from '../tools/tool.js';

const input = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } as const;
const usage = { inputTokens: 1, outputTokens: 1 };

/** Calls `lookup` once, then answers; reads nothing it is not asked to. */
function lookupModel(onRequest: (request: ModelRequest) => void = () => undefined): ModelProvider {
  return {
    provider: 'test',
    model: 'signals',
    async generate(request): Promise<ModelResponse> {
      onRequest(request);
      if (request.messages.some((message) => message.role === 'tool'))
        return { content: 'done', toolCalls: [], finishReason: 'stop', usage, model: 'signals' };
      return {
        content: '',
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"key":"k"}' }],
        finishReason: 'tool_calls',
        usage,
        model: 'signals',
      };
    },
  };
}

/** Counts the AbortControllers made while `work` runs. */
async function countControllers(work: () => Promise<unknown>): Promise<number> {
  let made = 0;
  const Original = globalThis.AbortController;
  vi.stubGlobal(
    'AbortController',
    class extends Original {
      constructor() {
        super();
        made++;
      }
    },
  );
  try {
    await work();
  } finally {
    vi.unstubAllGlobals();
  }
  return made;
}

afterEach(() => vi.unstubAllGlobals());

describe('signals of a run, its model attempts and its tool calls', () => {
  it('are not made when nothing reads them', async () => {
    const lookup = tool({ name: 'lookup', description: 'Looks up', input, execute: () => 'value' });
    const assistant = agent({ model: lookupModel(), tools: [lookup], clock: new FakeClock() });
    const made = await countControllers(async () => {
      const result = await assistant.run('go');
      expect(result.status).toBe('completed');
    });
    expect(made).toBe(0);
  });

  it('are made on first read, and abort when the run is cancelled', async () => {
    const signals: AbortSignal[] = [];
    const controller = new AbortController();
    const lookup = tool({
      name: 'lookup',
      description: 'Looks up',
      input,
      execute: (_value, context) => {
        signals.push(context.signal);
        controller.abort('stop');
        return new Promise(() => undefined);
      },
    });
    const assistant = agent({
      model: lookupModel((request) => signals.push(request.signal)),
      tools: [lookup],
      clock: new FakeClock(),
    });
    const result = await assistant.run('go', { signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(signals).toHaveLength(2);
    // The model's attempt had settled before the cancellation; the tool call was running.
    expect(signals[1]!.aborted).toBe(true);
    expect(signals[1]!.reason).toMatchObject({ code: 'run.cancelled' });
  });

  it('are accessors: a request or context copied by spreading leaves the signal out, copied by name keeps it', async () => {
    const requests: ModelRequest[] = [];
    const contexts: ToolContext[] = [];
    const lookup = tool({
      name: 'lookup',
      description: 'Looks up',
      input,
      execute: (_value, context) => {
        contexts.push(context);
        return 'value';
      },
    });
    const assistant = agent({
      model: lookupModel((request) => requests.push(request)),
      tools: [lookup],
      clock: new FakeClock(),
    });
    await assistant.run('go');
    const request = requests[0]!;
    const context = contexts[0]!;
    expect(Object.keys({ ...request })).not.toContain('signal');
    expect({ ...request, signal: request.signal }.signal).toBe(request.signal);
    expect(Object.keys({ ...context }).sort()).toEqual([
      'attempt',
      'callIndex',
      'idempotencyKey',
      'runId',
      'step',
    ]);
    expect({ ...context, signal: context.signal }.signal).toBe(context.signal);
  });
});
