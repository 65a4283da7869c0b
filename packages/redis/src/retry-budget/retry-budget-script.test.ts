// The retry budget's script on a real Redis, with the time passed in: counts per tenth of the window, the window
// sliding, releases, seeding and TTL.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClient, uniqueNamespace } from '../test-support/test-redis.js';
import type { BudgetAnswer } from './budget-counts.js';
import { RETRY_BUDGET_SCRIPT } from './retry-budget-script.js';

const TTL_MS = 60_000;
let client: Redis;
const namespace = uniqueNamespace('budget-script');
let keys = 0;

beforeAll(() => {
  client = testClient();
  client.defineCommand('keelRetryBudget', { numberOfKeys: 1, lua: RETRY_BUDGET_SCRIPT });
});
afterAll(() => client.quit());

/** A budget with a 1_000 ms window (ten slots of 100 ms) on a key of its own. */
function budget(windowed = true) {
  const key = `keel:${namespace}:retry-budget:b${keys++}`;
  const call = async (operation: string, nowMs: number, initialSpent = 0) => {
    const run = (client as unknown as Record<string, (...values: string[]) => Promise<string>>)
      .keelRetryBudget!;
    const answer = JSON.parse(
      await run.call(
        client,
        key,
        operation,
        String(nowMs),
        '1000',
        String(TTL_MS),
        windowed ? '1' : '0',
        String(initialSpent),
      ),
    ) as BudgetAnswer;
    const slots = Array.isArray(answer.slots) ? answer.slots : [];
    const requests = slots.reduce((sum, slot) => sum + slot[1], 0);
    const retries = slots.reduce((sum, slot) => sum + slot[2], 0);
    return { spent: answer.spent, requests, retries, slots: slots.length };
  };
  return { key, call };
}

describe('retry budget script', () => {
  it('counts requests and retries in the slot of their tenth of the window, and forgets them as it slides', async () => {
    const b = budget();
    await b.call('request', 0);
    await b.call('request', 50);
    await b.call('acquire', 150);
    expect(await b.call('request', 250)).toEqual({ spent: 1, requests: 3, retries: 1, slots: 3 });
    // At 1_050 the slot of 0-99 has left the window; at 1_150 the slot of 100-199 too.
    expect(await b.call('sync', 1_050)).toMatchObject({ requests: 1, retries: 1 });
    expect(await b.call('sync', 1_150)).toMatchObject({ spent: 1, requests: 1, retries: 0 });
  });

  it('releases the newest retry still in the window, and never below zero', async () => {
    const b = budget();
    await b.call('acquire', 0);
    await b.call('acquire', 500);
    expect(await b.call('release', 600)).toMatchObject({ spent: 1, retries: 1 });
    expect(await b.call('release', 1_200)).toMatchObject({ spent: 0, retries: 0 });
    expect(await b.call('release', 1_300)).toMatchObject({ spent: 0 });
  });

  it('keeps a plain count of retries when no ratio is set', async () => {
    const b = budget(false);
    await b.call('acquire', 0);
    expect(await b.call('acquire', 10)).toEqual({ spent: 2, requests: 0, retries: 0, slots: 1 });
  });

  it('seeds the spent count of a budget that does not exist yet, and only then; sets and refreshes the TTL', async () => {
    const b = budget();
    expect(await b.call('sync', 0, 4)).toMatchObject({ spent: 4 });
    expect(await b.call('sync', 0, 9)).toMatchObject({ spent: 4 });
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
    await client.pexpire(b.key, 1_000);
    await b.call('request', 0);
    expect(await client.pttl(b.key)).toBeGreaterThan(TTL_MS - 1_000);
  });
});
