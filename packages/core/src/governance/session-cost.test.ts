import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { sessionCost } from './session-cost.js';

describe('sessionCost', () => {
  it("adds up the cost of a session's runs, by model", async () => {
    const store = new MemoryRunStore();
    const usage = { inputTokens: 1_000, outputTokens: 500 };
    const mini = scriptedModel(() => ({ content: 'ok', usage }), {
      provider: 'openai',
      model: 'gpt-4.1-mini',
    });
    const big = scriptedModel(() => ({ content: 'ok', usage }), { provider: 'openai', model: 'gpt-4.1' });
    const first = await agent({ name: 'desk', model: mini, store }).run('hi', { sessionId: 's-1' });
    const second = await agent({ name: 'desk', model: big, store }).run('again', { sessionId: 's-1' });
    const elsewhere = await agent({ name: 'desk', model: big, store }).run('other', { sessionId: 's-2' });
    expect(elsewhere.status).toBe('completed');
    const session = (await store.loadSession('s-1'))!;
    const cost = await sessionCost(store, session);
    const one = first.report.cost!.totalUsd;
    const two = second.report.cost!.totalUsd;
    expect(cost.totalUsd).toBeCloseTo(one + two, 12);
    expect(cost.byModel).toEqual({ 'openai/gpt-4.1-mini': one, 'openai/gpt-4.1': two });
    expect(cost.runs).toEqual([
      { runId: first.runId, totalUsd: one },
      { runId: second.runId, totalUsd: two },
    ]);
    expect(cost.unpricedCalls).toBe(0);
  });

  it('refuses what is not a store or a session record with config.invalid saying what to pass', async () => {
    const store = new MemoryRunStore();
    await expect(sessionCost({} as never, { sessionId: 's', turns: [] })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('store must be a run store'),
    });
    await expect(sessionCost(store, 'support-42' as never)).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('session must be a session record'),
    });
  });

  it("loads a long session's runs a few at a time, not all at once", async () => {
    let inFlight = 0;
    let most = 0;
    const store = {
      loadRun: async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return undefined;
      },
    };
    const turns = Array.from({ length: 40 }, (_, index) => ({ runId: `run-${index}` }));
    const cost = await sessionCost(store, { sessionId: 's', turns } as never);
    expect(cost.runs).toHaveLength(40);
    expect(most).toBeLessThanOrEqual(8);
  });
});
