import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import type { PolicyContext } from './policy.js';
import { rateLimiter } from './rate-limiter.js';
import type { RateLimiterGrant, RateLimiterStore, RateLimiterStoreOptions } from './rate-limiter-store.js';

/** A store that answers what the test tells it, and records what it is asked. */
function scriptedStore(answers: Array<RateLimiterGrant | Promise<RateLimiterGrant>>) {
  const received: RateLimiterStoreOptions[] = [];
  const contexts: PolicyContext[] = [];
  let releases = 0;
  const factory = (options: RateLimiterStoreOptions): RateLimiterStore => {
    received.push(options);
    return {
      acquire: (context) => {
        contexts.push(context);
        return answers.shift()!;
      },
      release: () => {
        releases++;
      },
      tokens: 2.5,
      queued: 7,
    };
  };
  return { factory, received, contexts, releases: () => releases };
}

describe('rateLimiter: store', () => {
  it('hands its store the validated options, defaults applied', () => {
    const clock = new FakeClock();
    const store = scriptedStore([]);
    rateLimiter({ tokensPerInterval: 30, intervalMs: 60_000, mode: 'wait', store: store.factory, clock });
    expect(store.received).toEqual([
      { ratePerMs: 30 / 60_000, bucketSize: 30, mode: 'wait', maxWaitMs: 30_000, clock },
    ]);
  });

  it('runs the call on a grant, whether it comes at once or after a wait', async () => {
    const store = scriptedStore([true, Promise.resolve(true)]);
    const limiter = rateLimiter({ ratePerSecond: 1, store: store.factory });
    await expect(limiter.execute(() => 'now')).resolves.toBe('now');
    await expect(limiter.execute(() => 'later')).resolves.toBe('later');
    expect(store.contexts).toHaveLength(2);
  });

  it("turns a refusal into policy.rate_limited with the store's retryAfterMs and cause, and an event", async () => {
    const unreachable = new KeelError('store.unavailable', 'redis is down');
    const store = scriptedStore([{ kind: 'refused', retryAfterMs: 1_000, cause: unreachable }]);
    const limiter = rateLimiter({ ratePerSecond: 2, store: store.factory });
    const events: number[] = [];
    limiter.onRejected(({ retryAfterMs }) => events.push(retryAfterMs));
    let ran = false;
    const error = await limiter
      .execute(() => {
        ran = true;
      })
      .catch((caught: unknown) => caught as KeelError);
    expect(error).toMatchObject({
      code: 'policy.rate_limited',
      retryAfterMs: 1_000,
      cause: unreachable,
      data: { retryAfterMs: 1_000, bucketSize: 2, ratePerSecond: 2 },
    });
    expect(events).toEqual([1_000]);
    expect(ran).toBe(false);
  });

  it('gives the token back and does not run when the caller aborted while the grant was on its way', async () => {
    const controller = new AbortController();
    let grant!: (value: RateLimiterGrant) => void;
    const store = scriptedStore([new Promise((resolve) => (grant = resolve))]);
    const limiter = rateLimiter({ ratePerSecond: 1, mode: 'wait', store: store.factory });
    let ran = false;
    const pending = limiter.execute(() => {
      ran = true;
    }, controller.signal);
    controller.abort('not needed');
    grant(true);
    await expect(pending).rejects.toBe('not needed');
    expect(ran).toBe(false);
    expect(store.releases()).toBe(1);
  });

  it('never asks the store when the caller has already aborted', async () => {
    const store = scriptedStore([true]);
    const limiter = rateLimiter({ ratePerSecond: 1, store: store.factory });
    await expect(limiter.execute(() => 'x', AbortSignal.abort('gone'))).rejects.toBe('gone');
    expect(store.contexts).toHaveLength(0);
  });

  it('reads tokens and queued from its store', () => {
    const limiter = rateLimiter({ ratePerSecond: 1, store: scriptedStore([]).factory });
    expect([limiter.tokens, limiter.queued]).toEqual([2.5, 7]);
  });

  it('rejects a store that is not a factory with config.invalid', () => {
    expect(() => rateLimiter({ ratePerSecond: 1, store: 'redis' as never })).toThrow(
      /rateLimiter: store must be a function \(options\) => RateLimiterStore/,
    );
  });
});
