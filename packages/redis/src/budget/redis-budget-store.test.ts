// Budgets in Redis: the script's reserve and settle, two processes' agents racing for one remaining budget, and Redis
// stopped in the middle of runs (a private Redis of the test's own, so that stopping it disturbs no other test).
import { agent, type BudgetOptions, constant, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisInstance, startRedis } from '../../../../scripts/redis.js';
import { freeLoopbackPort } from '../../../../scripts/test-services.js';
import { type RedisState, redisState } from '../redis-state.js';
import { TEST_OPERATION_TIMEOUT_MS, uniqueNamespace } from '../test-support/test-redis.js';

let redis: RedisInstance;
let port: number;
const open: RedisState[] = [];
beforeAll(async () => {
  port = await freeLoopbackPort();
  redis = await startRedis(port);
}, 120_000);
afterAll(async () => {
  await Promise.all(open.map((state) => state.close()));
  await redis.stop();
}, 30_000);

function connect(namespace: string): RedisState {
  const state = redisState({
    url: `redis://127.0.0.1:${port}`,
    namespace,
    recoveryIntervalMs: 50,
    operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
  });
  open.push(state);
  return state;
}

describe('RedisBudgetStore', () => {
  it('reserves all counters or none, settles the actual spend, and reads what was used', async () => {
    const state = connect(uniqueNamespace('budget'));
    await state.ready();
    const store = state.budgetStore();
    const counters = [
      { key: 'a:tokens', limit: 100, amount: 60, ttlMs: 60_000 },
      { key: 'b:tokens', limit: 1_000, amount: 60, ttlMs: 0 },
    ];
    expect(await store.reserve(counters)).toEqual({ granted: true });
    expect(await store.reserve(counters)).toEqual({ granted: false, index: 0, used: 60 });
    // The refused reservation took nothing from b.
    expect(await store.read(['a:tokens', 'b:tokens'])).toEqual([60, 60]);
    await store.settle([
      { key: 'a:tokens', delta: -50, ttlMs: 60_000 },
      { key: 'b:tokens', delta: -50, ttlMs: 0 },
    ]);
    expect(await store.read(['a:tokens', 'b:tokens', 'never'])).toEqual([10, 10, 0]);
  });

  it('lets exactly one of two processes send the call one remaining budget allows', async () => {
    const namespace = uniqueNamespace('race');
    const states = [connect(namespace), connect(namespace)];
    await Promise.all(states.map((state) => state.ready()));
    let sent = 0;
    // A call is held until the other run has decided (sent its call, or ended refused): both reserve at once.
    let release = () => {};
    const decided = new Promise<void>((resolve) => {
      release = resolve;
    });
    const budgets = (state: RedisState): BudgetOptions => ({
      limits: [{ name: 'daily', scope: 'global', maxTokens: 1_500, period: 'day' }],
      store: state.budgetStore(),
      minOutputTokens: 1_000,
    });
    const agents = states.map((state) =>
      agent({
        model: scriptedModel(async () => {
          sent++;
          if (sent === 2) release();
          await decided;
          return { content: 'ok', usage: { inputTokens: 20, outputTokens: 20 } };
        }),
        maxOutputTokens: 1_000,
        budgets: budgets(state),
      }),
    );
    const runs = agents.map((assistant) => assistant.run('hello'));
    for (const run of runs) void run.then(release);
    const results = await Promise.all(runs);
    expect(sent).toBe(1);
    expect(results.map((result) => result.stopReason).sort()).toEqual(['budget_exhausted', 'final_answer']);
  });

  it('refuses calls while Redis is down mid-run (fail closed) and sends them again once it is back', async () => {
    const state = connect(uniqueNamespace('outage'));
    await state.ready();
    const sent: string[] = [];
    const refusals: string[] = [];
    let restarted: Promise<void> | undefined;
    const stopRedis = tool({
      name: 'stop_redis',
      description: 'stops the shared Redis',
      input: { type: 'object', properties: {} },
      execute: async () => {
        await redis.stop();
        return 'stopped';
      },
    });
    const assistant = agent({
      model: scriptedModel((request) => {
        sent.push(request.messages.at(-1)?.role ?? '');
        const turns = request.messages.filter((message) => message.role === 'assistant').length;
        return turns === 0
          ? { toolCalls: [{ name: 'stop_redis' }], usage: { inputTokens: 5, outputTokens: 5 } }
          : { content: 'done', usage: { inputTokens: 5, outputTokens: 5 } };
      }),
      tools: [stopRedis],
      retry: { maxAttempts: 50, delay: constant(100), runBudget: { maxRetries: 50, ratio: false } },
      budgets: {
        limits: [{ name: 'fleet', scope: 'global', maxTokens: 1_000_000 }],
        store: state.budgetStore(),
      },
      onEvent: (event) => {
        if (event.type !== 'retry-scheduled' || event.errorCode !== 'store.unavailable') return;
        refusals.push(event.errorCode);
        // Redis comes back after the first refused call.
        restarted ??= startRedis(port).then((instance) => {
          redis = instance;
        });
      },
    });
    const result = await assistant.run('stop Redis, then answer');
    await restarted;
    expect(result.status).toBe('completed');
    // Two calls were sent (before the outage, after it); the refused ones in between reached no model.
    expect(sent).toEqual(['user', 'tool']);
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(result.report.requests.total).toBe(2);
    expect(result.report.errors.byCode['store.unavailable']).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
