import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import type { Clock } from './clock.js';
import { rateLimiter } from './rate-limiter.js';

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

async function rejectionOf(promise: Promise<unknown>): Promise<KeelError> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as KeelError,
  );
}

describe('rateLimiter', () => {
  it('validates its options with messages naming the option', () => {
    const bad = [
      [undefined, /options must be an object such as \{ ratePerSecond: 5 \}/],
      [{}, /exactly one of ratePerSecond or tokensPerInterval/],
      [{ ratePerSecond: 1, tokensPerInterval: 1 }, /exactly one of ratePerSecond or tokensPerInterval/],
      [{ ratePerSecond: 0 }, /ratePerSecond must be a finite number above 0, got 0/],
      [{ ratePerSecond: Number.POSITIVE_INFINITY }, /ratePerSecond must be a finite number above 0/],
      [{ tokensPerInterval: -2 }, /tokensPerInterval must be a finite number above 0/],
      [{ tokensPerInterval: 2, intervalMs: 0 }, /intervalMs must be a finite number of milliseconds above 0/],
      [{ ratePerSecond: 1, bucketSize: 0.5 }, /bucketSize must be a finite number >= 1, got 0.5/],
      [{ ratePerSecond: 1, mode: 'queue' }, /mode must be 'reject' or 'wait', got queue/],
      [{ ratePerSecond: 1, maxWaitMs: -1 }, /maxWaitMs must be a number of milliseconds >= 0, got -1/],
      [
        { ratePerSecond: 1, maxWaitMs: Number.NaN },
        /maxWaitMs must be a number of milliseconds >= 0, got NaN/,
      ],
      [
        { ratePerSecond: 1, clock: {} },
        /clock must be a Clock with now\(\), setTimeout\(\) and clearTimeout\(\)/,
      ],
      [
        { ratePerSecond: 1, burst: 5 },
        /^Unknown rateLimiter option burst \(known: ratePerSecond, tokensPerInterval/,
      ],
    ] as const;
    for (const [options, message] of bad) {
      let caught: unknown;
      try {
        rateLimiter(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
      expect((caught as Error).message).toMatch(message);
    }
  });

  it('allows a burst of bucketSize, then rejects with retryAfterMs until a token refills', async () => {
    const clock = new FakeClock();
    const limiter = rateLimiter({ ratePerSecond: 2, bucketSize: 3, clock });
    for (let call = 0; call < 3; call++) await expect(limiter.execute(() => call)).resolves.toBe(call);

    const error = await rejectionOf(limiter.execute(() => 'over'));
    expect(error.code).toBe('policy.rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(500);
    expect(error.data).toMatchObject({ retryAfterMs: 500, bucketSize: 3, ratePerSecond: 2 });

    await clock.advance(200);
    expect((await rejectionOf(limiter.execute(() => 'over'))).retryAfterMs).toBe(300);
    await clock.advance(300);
    await expect(limiter.execute(() => 'refilled')).resolves.toBe('refilled');
    expect(clock.pendingTimers).toBe(0);
  });

  it('never refills beyond bucketSize', async () => {
    const clock = new FakeClock();
    const limiter = rateLimiter({ ratePerSecond: 10, bucketSize: 2, clock });
    await limiter.execute(() => 1);
    await clock.advance(60_000);
    expect(limiter.tokens).toBe(2);
    await limiter.execute(() => 1);
    await limiter.execute(() => 1);
    expect((await rejectionOf(limiter.execute(() => 1))).code).toBe('policy.rate_limited');
  });

  it('takes the rate as tokensPerInterval per intervalMs, with bucketSize defaulting to tokensPerInterval', async () => {
    const clock = new FakeClock();
    const limiter = rateLimiter({ tokensPerInterval: 10, intervalMs: 60_000, clock });
    for (let call = 0; call < 10; call++) await limiter.execute(() => call);
    expect((await rejectionOf(limiter.execute(() => 'over'))).retryAfterMs).toBe(6_000);
  });

  it('rounds a fractional wait up to whole milliseconds', async () => {
    const clock = new FakeClock();
    const limiter = rateLimiter({ ratePerSecond: 3, bucketSize: 1, clock });
    await limiter.execute(() => 1);
    expect((await rejectionOf(limiter.execute(() => 1))).retryAfterMs).toBe(334);
    await clock.advance(334);
    await expect(limiter.execute(() => 'ok')).resolves.toBe('ok');
  });

  it('survives a clock stepping backwards without losing tokens', async () => {
    let nowMs = 10_000;
    const clock: Clock = { now: () => nowMs, setTimeout: () => 0, clearTimeout: () => {} };
    const limiter = rateLimiter({ ratePerSecond: 1, bucketSize: 2, clock });
    await limiter.execute(() => 1);
    nowMs = 5_000;
    expect(limiter.tokens).toBe(1);
    nowMs = 6_000;
    expect(limiter.tokens).toBe(2);
  });

  it('reports rejections to onRejected listeners', async () => {
    const clock = new FakeClock();
    const limiter = rateLimiter({ ratePerSecond: 1, bucketSize: 1, clock });
    const events: unknown[] = [];
    limiter.onRejected((event) => events.push(event));
    await limiter.execute(() => 1);
    await rejectionOf(limiter.execute(() => 1));
    expect(events).toEqual([{ retryAfterMs: 1_000 }]);
  });

  describe("in 'wait' mode", () => {
    it('starts waiting calls first come, first served, as tokens refill', async () => {
      const clock = new FakeClock();
      const startMs = clock.now();
      const limiter = rateLimiter({ ratePerSecond: 10, bucketSize: 1, mode: 'wait', clock });
      const started: Array<[string, number]> = [];
      const call = (name: string) =>
        limiter.execute(() => {
          started.push([name, clock.now() - startMs]);
          return name;
        });
      const calls = ['a', 'b', 'c', 'd'].map(call);
      await flushMicrotasks();
      expect(started).toEqual([['a', 0]]);
      expect(limiter.queued).toBe(3);

      await clock.advance(100);
      expect(started.map(([name]) => name)).toEqual(['a', 'b']);
      // A newcomer arriving while others wait queues behind them, even with a token about to free up.
      await clock.advance(99);
      const late = call('late');
      await clock.advance(1_000);
      await expect(Promise.all([...calls, late])).resolves.toEqual(['a', 'b', 'c', 'd', 'late']);
      expect(started).toEqual([
        ['a', 0],
        ['b', 100],
        ['c', 200],
        ['d', 300],
        ['late', 400],
      ]);
      expect(clock.pendingTimers).toBe(0);
    });

    it('rejects at once a call that would wait longer than maxWaitMs', async () => {
      const clock = new FakeClock();
      const limiter = rateLimiter({ ratePerSecond: 1, bucketSize: 1, mode: 'wait', maxWaitMs: 1_500, clock });
      await limiter.execute(() => 'a');
      const second = limiter.execute(() => 'b');
      expect(limiter.queued).toBe(1);
      // The third would need the token after the queued call's: 2000 ms away.
      const error = await rejectionOf(limiter.execute(() => 'c'));
      expect(error.code).toBe('policy.rate_limited');
      expect(error.retryAfterMs).toBe(2_000);
      expect(limiter.queued).toBe(1);
      await clock.advance(1_000);
      await expect(second).resolves.toBe('b');
    });

    it('uses a default maxWaitMs of 30 seconds', async () => {
      const clock = new FakeClock();
      const limiter = rateLimiter({ tokensPerInterval: 1, intervalMs: 31_000, mode: 'wait', clock });
      await limiter.execute(() => 'a');
      expect((await rejectionOf(limiter.execute(() => 'b'))).retryAfterMs).toBe(31_000);
    });

    it('drops an aborted waiter at once and keeps serving the others on time', async () => {
      const clock = new FakeClock();
      const startMs = clock.now();
      const limiter = rateLimiter({ ratePerSecond: 10, bucketSize: 1, mode: 'wait', clock });
      await limiter.execute(() => 'first');
      const controller = new AbortController();
      let abortedRan = false;
      const aborted = limiter.execute(() => {
        abortedRan = true;
      }, controller.signal);
      const startedAt: number[] = [];
      const next = limiter.execute(() => startedAt.push(clock.now() - startMs));
      expect(limiter.queued).toBe(2);

      const reason = new Error('stop waiting');
      controller.abort(reason);
      expect(limiter.queued).toBe(1);
      await expect(aborted).rejects.toBe(reason);
      // The aborted waiter's token goes to the next one, which starts when the first token is due.
      await clock.advance(100);
      await next;
      expect(startedAt).toEqual([100]);
      expect(abortedRan).toBe(false);
      expect(clock.pendingTimers).toBe(0);
    });

    it('gives back the token of a waiter aborted between its turn and its start', async () => {
      // A clock whose timers fire only when the test says, so that two tokens can be due in one turn.
      let nowMs = 0;
      const timers: Array<() => void> = [];
      const clock: Clock = {
        now: () => nowMs,
        setTimeout: (callback) => timers.push(callback),
        clearTimeout: () => {},
      };
      const limiter = rateLimiter({ ratePerSecond: 10, bucketSize: 2, mode: 'wait', clock });
      await limiter.execute(() => 'one');
      await limiter.execute(() => 'two');
      const controller = new AbortController();
      const startedAt: Array<[string, number]> = [];
      const start = (name: string) => startedAt.push([name, nowMs]);
      const first = limiter.execute(() => {
        start('first');
        controller.abort('second no longer needed');
      });
      const second = limiter.execute(() => start('second'), controller.signal);
      const third = limiter.execute(() => start('third'));
      // Two tokens are back: `first` and `second` are handed one each in the same turn; `first` runs before `second`
      // has started, and cancels it. Its token must go to `third` at once, not wait for the next refill.
      nowMs = 200;
      timers.shift()!();
      await first;
      await expect(second).rejects.toBe('second no longer needed');
      await flushMicrotasks();
      expect(startedAt).toEqual([
        ['first', 200],
        ['third', 200],
      ]);
      await third;
      expect(limiter.queued).toBe(0);
    });

    it('waits any time with maxWaitMs Infinity, never arming a timer beyond what a timer can wait', async () => {
      const clock = new FakeClock(0);
      let timersArmed = 0;
      const counting: Clock = {
        now: () => clock.now(),
        setTimeout: (callback, delayMs) => {
          timersArmed++;
          return clock.setTimeout(callback, delayMs);
        },
        clearTimeout: (handle) => clock.clearTimeout(handle),
      };
      // One token per 2^32 ms (about 50 days): the next token is further away than a Node timer can wait.
      const limiter = rateLimiter({
        tokensPerInterval: 1,
        intervalMs: 2 ** 32,
        mode: 'wait',
        maxWaitMs: Number.POSITIVE_INFINITY,
        clock: counting,
      });
      await limiter.execute(() => 'first');
      const second = track(limiter.execute(() => 'second'));
      await clock.advance(1_000);
      // A timer armed for more than 2^31 - 1 ms fires after 1 ms and would spin once a millisecond.
      expect(timersArmed).toBe(1);
      expect(second.settled).toBe(false);
      await clock.advance(2 ** 32);
      expect(second.value).toBe('second');
      // At most one timer per 2^31 - 1 ms of waiting.
      expect(timersArmed).toBeLessThanOrEqual(3);
      expect(clock.pendingTimers).toBe(0);
    });

    it('clears its timer when every waiter has aborted', async () => {
      const clock = new FakeClock();
      const limiter = rateLimiter({ ratePerSecond: 1, bucketSize: 1, mode: 'wait', clock });
      await limiter.execute(() => 'first');
      const controller = new AbortController();
      const waiting = limiter.execute(() => 'never', controller.signal);
      expect(clock.pendingTimers).toBe(1);
      controller.abort(new Error('gone'));
      await expect(waiting).rejects.toThrow('gone');
      expect(clock.pendingTimers).toBe(0);
      // The token it did not take is still there for the next caller.
      await clock.advance(1_000);
      await expect(limiter.execute(() => 'next')).resolves.toBe('next');
    });
  });
});
