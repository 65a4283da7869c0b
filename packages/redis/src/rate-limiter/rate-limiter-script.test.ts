// The rate limiter's GCRA script on a real Redis, with the time passed in: bursts, spacing, reservations in 'wait'
// mode, refusals, release, and the key's expiry once the bucket would be full again.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClient, uniqueNamespace } from '../test-support/test-redis.js';
import { RATE_LIMITER_SCRIPT } from './rate-limiter-script.js';

let client: Redis;
const namespace = uniqueNamespace('rate-script');
let keys = 0;

beforeAll(() => {
  client = testClient();
  client.defineCommand('keelRateLimiter', { numberOfKeys: 1, lua: RATE_LIMITER_SCRIPT });
});
afterAll(() => client.quit());

/** A limiter of `ratePerSecond` and `bucketSize` on a key of its own; `maxWait`: '0' rejects, '' waits any time. */
function limiter(ratePerSecond: number, bucketSize: number) {
  const key = `keel:${namespace}:rate-limiter:l${keys++}`;
  const intervalMs = 1_000 / ratePerSecond;
  const call = async (operation: string, nowMs: number | '', maxWait: string) => {
    const run = (client as unknown as Record<string, (...values: string[]) => Promise<string[]>>)
      .keelRateLimiter!;
    const [outcome, waitMs, tatMs] = await run.call(
      client,
      key,
      operation,
      String(nowMs),
      String(intervalMs),
      String((bucketSize - 1) * intervalMs),
      maxWait,
    );
    return { outcome, waitMs: Number(waitMs), tatMs: Number(tatMs) };
  };
  return {
    key,
    acquire: (nowMs: number | '', maxWait = '0') => call('acquire', nowMs, maxWait),
    release: (nowMs: number) => call('release', nowMs, ''),
  };
}

describe('rate limiter script', () => {
  it('grants a full bucket at once, then one call per interval, refusing with the time until the next', async () => {
    const l = limiter(10, 3);
    for (let call = 0; call < 3; call++) expect((await l.acquire(1_000)).outcome).toBe('granted');
    expect(await l.acquire(1_000)).toMatchObject({ outcome: 'refused', waitMs: 100 });
    expect(await l.acquire(1_060)).toMatchObject({ outcome: 'refused', waitMs: 40 });
    expect(await l.acquire(1_100)).toMatchObject({ outcome: 'granted', waitMs: 0 });
    expect((await l.acquire(1_100)).outcome).toBe('refused');
    // A long pause refills the bucket, never beyond bucketSize.
    for (let call = 0; call < 3; call++) expect((await l.acquire(10_000)).outcome).toBe('granted');
    expect((await l.acquire(10_000)).outcome).toBe('refused');
  });

  it('books turns in wait mode, one interval apart, and refuses a turn beyond the longest wait without booking it', async () => {
    const l = limiter(10, 1);
    expect(await l.acquire(0, '')).toMatchObject({ outcome: 'granted', waitMs: 0 });
    expect(await l.acquire(0, '')).toMatchObject({ outcome: 'granted', waitMs: 100 });
    expect(await l.acquire(0, '250')).toMatchObject({ outcome: 'granted', waitMs: 200 });
    expect(await l.acquire(0, '250')).toMatchObject({ outcome: 'refused', waitMs: 300 });
    expect(await l.acquire(10, '295')).toMatchObject({ outcome: 'granted', waitMs: 290 });
  });

  it('takes one interval back on release, never before now', async () => {
    const l = limiter(10, 1);
    await l.acquire(0, '');
    await l.acquire(0, '');
    expect((await l.release(0)).tatMs).toBe(100);
    expect(await l.acquire(0, '')).toMatchObject({ waitMs: 100 });
    await l.release(5_000);
    expect(await l.acquire(5_000)).toMatchObject({ outcome: 'granted', waitMs: 0 });
  });

  it('keeps the key until the bucket would be full again, and 10 s more', async () => {
    const l = limiter(10, 5);
    const now = Date.now();
    await l.acquire(now);
    await l.acquire(now);
    // TAT is 2 intervals (200 ms) ahead of now.
    const ttl = await client.pttl(l.key);
    expect(ttl).toBeGreaterThan(10_100);
    expect(ttl).toBeLessThanOrEqual(10_200);
  });

  it('reads the server clock when no time is given', async () => {
    const l = limiter(10, 1);
    expect((await l.acquire('', '')).outcome).toBe('granted');
    const second = await l.acquire('', '');
    // Booked one interval after the first, minus the little time between the two calls.
    expect(second.outcome).toBe('granted');
    expect(second.waitMs).toBeGreaterThan(50);
    expect(second.waitMs).toBeLessThanOrEqual(100);
  });
});
