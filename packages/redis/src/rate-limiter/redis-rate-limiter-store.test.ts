// Rate limiters of two processes (two RedisStates) taking from one bucket in a real Redis, with a fake clock passed
// to the script (timeSource: 'clock'); and the same decisions as core's in-memory bucket on random arrivals.
import { type KeelError, rateLimiter } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisState } from '../redis-state.js';
import { type CommandMonitor, monitorCommands } from '../test-support/command-monitor.js';
import { eventually } from '../test-support/eventually.js';
import { fakeClockState, uniqueNamespace } from '../test-support/test-redis.js';

const open: RedisState[] = [];
const monitors: CommandMonitor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((state) => state.close()));
  await Promise.all(monitors.splice(0).map((monitor) => monitor.close()));
});

async function twoProcesses() {
  const namespace = uniqueNamespace('rate-store');
  const clock = new FakeClock(1_000_000);
  const connect = () => fakeClockState(namespace, clock, open);
  return { namespace, clock, first: await connect(), second: await connect() };
}

describe('redisRateLimiterStore', () => {
  it('makes two processes take from one bucket', async () => {
    const { first, second, clock } = await twoProcesses();
    const a = rateLimiter({
      ratePerSecond: 10,
      bucketSize: 2,
      store: first.rateLimiterStore({ name: 'api' }),
      clock,
    });
    const b = rateLimiter({
      ratePerSecond: 10,
      bucketSize: 2,
      store: second.rateLimiterStore({ name: 'api' }),
      clock,
    });
    await a.execute(() => 1);
    await a.execute(() => 2);
    const refused = await b.execute(() => 3).catch((error: KeelError) => error);
    expect(refused).toMatchObject({ code: 'policy.rate_limited', retryAfterMs: 100 });
    await clock.advance(100);
    await expect(b.execute(() => 'b')).resolves.toBe('b');
    await expect(a.execute(() => 'a')).rejects.toMatchObject({ code: 'policy.rate_limited' });
  });

  it("books a waiting call's turn and runs it then; an abort while waiting gives the turn back", async () => {
    const { first, second, clock } = await twoProcesses();
    const options = { ratePerSecond: 10, bucketSize: 1, mode: 'wait' as const, clock };
    const a = rateLimiter({ ...options, store: first.rateLimiterStore({ name: 'api' }) });
    const b = rateLimiter({ ...options, store: second.rateLimiterStore({ name: 'api' }) });
    await a.execute(() => 'now');
    const started: number[] = [];
    const controller = new AbortController();
    const cancelled = b.execute(() => started.push(clock.now()), controller.signal);
    const later = a.execute(() => started.push(clock.now()));
    await eventually(() => b.queued + a.queued === 2, 'both calls to book their turns');
    controller.abort('no longer needed');
    await expect(cancelled).rejects.toBe('no longer needed');
    await clock.advance(200);
    await later;
    // `later` had the third turn (200 ms). The cancelled turn was given back: the next call runs at once at 200,
    // where it would otherwise have waited for 300.
    expect(started).toEqual([1_000_200]);
    const next = a.execute(() => clock.now());
    await expect(next).resolves.toBe(1_000_200);
  });

  it('takes a token with one round trip', async () => {
    const { namespace, first, clock } = await twoProcesses();
    const monitor = await monitorCommands(namespace);
    monitors.push(monitor);
    const limiter = rateLimiter({
      ratePerSecond: 1,
      bucketSize: 20,
      store: first.rateLimiterStore({ name: 'api' }),
      clock,
    });
    for (let call = 0; call < 10; call++) await limiter.execute(() => call);
    // One script call per take: EVAL the first time on a connection (ioredis sends the script once), EVALSHA after.
    const names = (await monitor.settle()).map((command) => command.split(' ')[0]);
    expect(names).toEqual(['eval', ...Array(9).fill('evalsha')]);
    expect(limiter.tokens).toBe(10);
  });

  it('decides as core in-memory bucket does, on random arrivals', async () => {
    const { first, clock } = await twoProcesses();
    const options = { ratePerSecond: 10, bucketSize: 3, clock };
    const shared = rateLimiter({ ...options, store: first.rateLimiterStore({ name: 'differential' }) });
    const local = rateLimiter(options);
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    // The retry-after of a refusal, or 0 when the call ran.
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 0,
        (error: KeelError) => error.retryAfterMs ?? Number.NaN,
      );
    const decisions: Array<[number, number]> = [];
    for (let step = 0; step < 200; step++) {
      if (random() < 0.4) await clock.advance(Math.floor(random() * 250));
      decisions.push([await outcome(shared.execute(() => 1)), await outcome(local.execute(() => 1))]);
    }
    for (const [sharedWait, localWait] of decisions) {
      expect(sharedWait === 0).toBe(localWait === 0);
      // The in-memory bucket adds up fractional tokens, and its float error can round a wait up by 1 ms.
      expect(Math.abs(sharedWait - localWait)).toBeLessThanOrEqual(1);
    }
    expect(decisions.filter(([wait]) => wait === 0).length).toBeGreaterThan(20);
    expect(decisions.filter(([wait]) => wait > 0).length).toBeGreaterThan(20);
  });

  it('checks its options with config.invalid', async () => {
    const { first } = await twoProcesses();
    expect(() => first.rateLimiterStore({} as never)).toThrow(
      /rateLimiterStore: name must be a non-empty string/,
    );
    expect(() => first.rateLimiterStore({ name: 'api', localRatePerSecond: 0 })).toThrow(
      /localRatePerSecond must be a finite number above 0, got 0/,
    );
    expect(() => first.rateLimiterStore({ name: 'a b' })).toThrow(/without whitespace/);
  });
});
