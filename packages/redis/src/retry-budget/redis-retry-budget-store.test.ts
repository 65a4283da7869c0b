// Retry budgets of two processes (two RedisStates) drawing from one budget in a real Redis, with a fake clock passed
// to the script (timeSource: 'clock'); and the same decisions as core's in-memory budget in one process.
import { type RetryBudget, retryBudget } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisState } from '../redis-state.js';
import { eventually } from '../test-support/eventually.js';
import { fakeClockState, testClient, uniqueNamespace } from '../test-support/test-redis.js';

const open: RedisState[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((state) => state.close()));
});

function connect(namespace: string, clock: FakeClock): Promise<RedisState> {
  return fakeClockState(namespace, clock, open);
}

function acquireAll(budget: RetryBudget, limit = 100): number {
  let granted = 0;
  while (granted < limit && budget.tryAcquireRetry()) granted++;
  return granted;
}

describe('redisRetryBudgetStore', () => {
  it('grants the fleet as many retries as one budget would, whichever process asks', async () => {
    const namespace = uniqueNamespace('budget-store');
    const clock = new FakeClock(1_000_000);
    const options = { ratio: 0.25, minRetriesPerSecond: 0, clock };
    const a = retryBudget({
      ...options,
      store: (await connect(namespace, clock)).retryBudgetStore({ name: 'models' }),
    });
    const b = retryBudget({
      ...options,
      store: (await connect(namespace, clock)).retryBudgetStore({ name: 'models' }),
    });
    const client = testClient();
    const key = `keel:${namespace}:retry-budget:models`;
    /** Requests and retries in Redis's slots. */
    const stored = async (): Promise<[number, number]> => {
      const fields = Array.from({ length: 10 }, (_, slot) => [`q${slot}`, `r${slot}`]).flat();
      const values = (await client.hmget(key, ...fields)).map(Number);
      return [values.filter((_, index) => index % 2 === 0), values.filter((_, index) => index % 2 === 1)].map(
        (list) => list.reduce((sum, value) => sum + value, 0),
      ) as [number, number];
    };
    const storedAre = (requests: number, retries: number) => async () => {
      const [storedRequests, storedRetries] = await stored();
      return storedRequests === requests && storedRetries === retries;
    };
    for (let request = 0; request < 10; request++) a.recordRequest();
    await eventually(storedAre(10, 0), "a's requests to reach Redis");
    // A copy takes in what other processes did with the answers to its own operations.
    for (let request = 0; request < 10; request++) b.recordRequest();
    await eventually(() => b.snapshot().requestsInWindow === 20, "b's copy to count a's requests");
    a.recordRequest();
    await eventually(() => a.snapshot().requestsInWindow === 21, "a's copy to count b's requests");
    // 21 requests × 0.25: 5 retries for the fleet. a takes 3 of them.
    expect(acquireAll(a, 3)).toBe(3);
    await eventually(storedAre(21, 3), "a's retries to reach Redis");
    b.recordRequest();
    await eventually(() => b.snapshot().retriesInWindow === 3, "b's copy to count a's retries");
    // 22 requests × 0.25 = 5.5: b gets the 2 left, not the 5 a budget of its own would give.
    expect(acquireAll(b)).toBe(2);
    await eventually(storedAre(22, 5), "b's retries to reach Redis");
    a.recordRequest();
    a.recordRequest();
    await eventually(() => a.snapshot().spent === 5, "a's copy to count b's retries");
    // 24 requests: 6 retries, 5 spent.
    expect(acquireAll(a)).toBe(1);
    await client.quit();
  });

  it('shares a lifetime cap, seeded from initialSpent when the budget is new', async () => {
    const namespace = uniqueNamespace('budget-store');
    const clock = new FakeClock(1_000_000);
    const first = await connect(namespace, clock);
    const a = retryBudget({
      maxRetries: 5,
      ratio: false,
      initialSpent: 1,
      store: first.retryBudgetStore({ name: 'run' }),
      clock,
    });
    await eventually(() => a.snapshot().spent === 1, 'the seeded budget');
    expect(acquireAll(a, 2)).toBe(2);
    const second = await connect(namespace, clock);
    const b = retryBudget({
      maxRetries: 5,
      ratio: false,
      initialSpent: 0,
      store: second.retryBudgetStore({ name: 'run' }),
      clock,
    });
    await eventually(() => b.snapshot().spent === 3, "b's first read of the shared budget");
    expect(acquireAll(b)).toBe(2);
    expect(b.snapshot()).toMatchObject({ spent: 5, remaining: 0 });
  });

  it('decides as core in-memory budget does, in one process, on random traffic', async () => {
    const clock = new FakeClock(1_000_000);
    const state = await connect(uniqueNamespace('budget-store'), clock);
    const options = { ratio: 0.3, minRetriesPerSecond: 1, windowMs: 2_000, maxRetries: 40, clock };
    const shared = retryBudget({ ...options, store: state.retryBudgetStore({ name: 'differential' }) });
    const local = retryBudget(options);
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    let granted = 0;
    for (let step = 0; step < 400; step++) {
      const roll = random();
      if (roll < 0.5) {
        shared.recordRequest();
        local.recordRequest();
      } else if (roll < 0.85) {
        const decision = shared.tryAcquireRetry();
        expect(decision, `step ${step}`).toBe(local.tryAcquireRetry());
        if (decision) granted++;
      } else if (roll < 0.9) {
        shared.releaseRetry?.();
        local.releaseRetry?.();
      } else {
        await clock.advance(Math.floor(random() * 600));
      }
      expect(shared.snapshot(), `step ${step}`).toEqual(local.snapshot());
    }
    expect(granted).toBeGreaterThan(10);
    // Once every operation has been answered, Redis holds the same lifetime count.
    const client = testClient();
    const key = `keel:${state.namespace}:retry-budget:differential`;
    await eventually(
      async () => Number(await client.hget(key, 'spent')) === local.snapshot().spent,
      "Redis's count to catch up",
    );
    await client.quit();
  });
});
