// Runs whose model and tools answer at once still let the event loop turn between steps, so that timers (run
// deadlines included) and I/O are served while they run.
import { describe, expect, it } from 'vitest';
import type { ModelProvider, ModelResponse } from '../../spec/model.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { agent } from '../agent.js';
import { tool } from '../tools/tool.js';
import { eventLoopTurn } from './event-loop-turn.js';

const usage = { inputTokens: 1, outputTokens: 1 };

/** Asks for the `tick` tool at every step, at once: a run ends only by a limit. */
const instantModel: ModelProvider = {
  provider: 'test',
  model: 'instant',
  generate(): Promise<ModelResponse> {
    return Promise.resolve({
      content: '',
      toolCalls: [{ id: 'call_1', name: 'tick', arguments: '{}' }],
      finishReason: 'tool_calls',
      usage,
      model: 'instant',
    });
  },
};

const tick = tool({
  name: 'tick',
  description: 'Answers at once',
  input: { type: 'object', properties: {} },
  execute: () => 'tock',
});

describe('the run loop lets the event loop turn between steps', () => {
  it('1,000 runs whose model and tool answer at once end at their 50 ms deadline, not at their turn limit', async () => {
    const clock = new FakeClock();
    const instant = agent({
      model: instantModel,
      tools: [tick],
      clock,
      limits: { maxTurns: 100, timeoutMs: 50 },
    });
    const runs = Array.from({ length: 1_000 }, () => instant.run('go'));
    // A timer elsewhere in the process (here: the one that moves the runs' clock past their deadline) runs only
    // when the event loop turns, which needs every run to stop running microtasks.
    setImmediate(() => void clock.advance(50));
    const results = await Promise.all(runs);
    const stopReasons = new Set(results.map((result) => result.stopReason));
    expect([...stopReasons]).toEqual(['timeout']);
    expect(results.every((result) => result.error?.code === 'run.timeout')).toBe(true);
    // The runs ended long before their turn limit.
    expect(Math.max(...results.map((result) => result.report.steps))).toBeLessThan(100);
  }, 60_000);

  it('hands every caller the same turn while one is pending', async () => {
    // Busy until the slice is over.
    let turn = eventLoopTurn();
    while (turn === undefined) turn = eventLoopTurn();
    expect(eventLoopTurn()).toBe(turn);
    await turn;
  });
});
