import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { constant } from './delays.js';
import type { PolicyContext } from './policy.js';
import { retry } from './retry.js';
import { type TimeoutEvent, timeout } from './timeout.js';

/** One turn of the event loop: a caller signal's shared listener and an idle deadline timer are let go there. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

/** Resolves with `value` after `delayMs` on the clock, ignoring any signal. */
function later<T>(clock: FakeClock, delayMs: number, value: T): Promise<T> {
  return new Promise((resolve) => clock.setTimeout(() => resolve(value), delayMs));
}

/** Waits on the clock like a well-behaved function: rejects with the signal's reason when it aborts. */
function obedient(clock: FakeClock, delayMs: number) {
  return ({ signal }: PolicyContext) =>
    new Promise<string>((resolve, reject) => {
      const handle = clock.setTimeout(() => resolve('done'), delayMs);
      signal.addEventListener(
        'abort',
        () => {
          clock.clearTimeout(handle);
          reject(signal.reason);
        },
        { once: true },
      );
    });
}

describe('timeout (cooperative)', () => {
  it('returns a result that arrives in time, without any timer for a function that ignores its signal', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock });
    const outcome = track(policy.execute(() => later(clock, 500, 'fast')));
    await flushMicrotasks();
    // Only the function's own timer: the policy set none.
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(500);
    expect(outcome.value).toBe('fast');
    expect(clock.pendingTimers).toBe(0);
  });

  it('aborts the signal at the deadline with the timeout error, which the caller receives', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock });
    let seen: AbortSignal | undefined;
    const fn = obedient(clock, 5_000);
    const outcome = track(
      policy.execute((context) => {
        seen = context.signal;
        return fn(context);
      }),
    );
    await clock.advance(999);
    expect(seen?.aborted).toBe(false);
    await clock.advance(1);
    expect(seen?.aborted).toBe(true);
    const error = outcome.error as KeelError;
    expect(error).toBe(seen?.reason);
    expect(error.code).toBe('policy.timeout');
    expect(error.data).toEqual({ timeoutMs: 1_000 });
    expect(error.retryable).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('turns any rejection after the abort into the timeout error the signal carried', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    let seen: AbortSignal | undefined;
    const outcome = track(
      policy.execute(({ signal }) => {
        seen = signal;
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('socket closed'))),
        );
      }),
    );
    await clock.advance(100);
    const error = outcome.error as KeelError;
    expect(error.code).toBe('policy.timeout');
    expect(error).toBe(seen?.reason);
  });

  it('returns a late result from a function that read its signal but finished anyway', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const outcome = track(
      policy.execute(async ({ signal }) => {
        await later(clock, 300, null);
        return signal.aborted ? 'late, after abort' : 'early';
      }),
    );
    await clock.advance(300);
    expect(outcome.value).toBe('late, after abort');
  });

  it('hands an already aborted signal to a function that first reads it after the deadline', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const outcome = track(
      policy.execute(async (context) => {
        await later(clock, 150, null);
        context.signal.throwIfAborted();
        return 'unreachable';
      }),
    );
    await clock.advance(150);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
    expect(clock.pendingTimers).toBe(0);
  });

  it('reports the deadline through context.aborted without creating a signal or timer', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const polls: boolean[] = [];
    const outcome = track(
      policy.execute(async (context) => {
        polls.push(context.aborted);
        await later(clock, 100, null);
        polls.push(context.aborted);
        throw new Error('stopped because aborted');
      }),
    );
    await clock.advance(100);
    expect(polls).toEqual([false, true]);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
  });

  it('rethrows unchanged a failure of a function that was never told about the deadline', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const own = new KeelError('tool.failed', 'disk full');
    const outcome = track(
      policy.execute(async () => {
        await later(clock, 200, null);
        throw own;
      }),
    );
    await clock.advance(200);
    expect(outcome.error).toBe(own);
  });

  it('uses the code it is given', async () => {
    const clock = new FakeClock();
    for (const code of ['tool.timeout', 'network.timeout'] as const) {
      const outcome = track(timeout(50, { clock, code }).execute(obedient(clock, 1_000)));
      await clock.advance(50);
      expect((outcome.error as KeelError).code).toBe(code);
      expect((outcome.error as KeelError).data).toEqual({ timeoutMs: 50 });
    }
  });

  it('lets an enclosing timeout abort an inner one through the lazy context, creating nothing otherwise', async () => {
    const clock = new FakeClock();
    const outer = timeout(1_000, { clock });
    const inner = timeout(5_000, { clock, code: 'tool.timeout' });
    await outer.execute((context) => inner.execute(() => 'quick', context));
    expect(clock.pendingTimers).toBe(0);
    const outcome = track(outer.execute((context) => inner.execute(obedient(clock, 10_000), context)));
    await clock.advance(1_000);
    // The outer deadline is a cancellation from the inner policy's point of view: its error passes through.
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
    await clock.advance(10_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('emits onTimeout when it aborts a call', async () => {
    const clock = new FakeClock();
    const policy = timeout(10, { clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((event) => events.push(event));
    track(policy.execute(obedient(clock, 100)));
    await clock.advance(10);
    expect(events).toEqual([{ timeoutMs: 10, strategy: 'cooperative' }]);
  });

  it('emits onTimeout, once, when the deadline is noticed lazily through context.aborted', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((event) => events.push(event));
    const outcome = track(
      policy.execute(async (context) => {
        await later(clock, 200, null);
        if (context.aborted && context.aborted) throw new Error('gave up');
        return 'late';
      }),
    );
    await clock.advance(200);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
    expect(events).toEqual([{ timeoutMs: 100, strategy: 'cooperative' }]);
  });

  it('emits onTimeout, once, when the signal is first read after the deadline', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((event) => events.push(event));
    const outcome = track(
      policy.execute(async (context) => {
        await later(clock, 150, null);
        context.signal.throwIfAborted();
        return 'unreachable';
      }),
    );
    await clock.advance(150);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
    expect(events).toEqual([{ timeoutMs: 100, strategy: 'cooperative' }]);
  });

  it('emits no onTimeout for a call that finished in time, read its signal or not', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((event) => events.push(event));
    await policy.execute((context) => (context.aborted ? 'aborted' : 'in time'));
    await policy.execute(({ signal }) => (signal.aborted ? 'aborted' : 'in time'));
    await clock.advance(1_000);
    expect(events).toEqual([]);
  });

  it('produces a retryable error that retry retries', async () => {
    const clock = new FakeClock();
    const perAttempt = timeout(100, { clock });
    const policy = retry({ clock, delay: constant(0), maxAttempts: 3 });
    const attempts: number[] = [];
    const outcome = track(
      policy.execute((context) =>
        perAttempt.execute((inner) => {
          attempts.push(inner.attempt);
          return inner.attempt < 3 ? obedient(clock, 1_000)(inner) : 'third time';
        }, context),
      ),
    );
    await clock.advance(300);
    expect(outcome.value).toBe('third time');
    expect(attempts).toEqual([1, 2, 3]);
  });
});

describe('timeout (forced)', () => {
  it('rejects at the deadline even when the function ignores its signal, and aborts that signal', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock, strategy: 'forced' });
    let seen: AbortSignal | undefined;
    const outcome = track(
      policy.execute(({ signal }) => {
        seen = signal;
        return later(clock, 60_000, 'too late');
      }),
    );
    await clock.advance(1_000);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
    expect((outcome.error as KeelError).data).toEqual({ timeoutMs: 1_000 });
    expect(seen?.reason).toBe(outcome.error);
    // Only the abandoned function's own timer is left.
    expect(clock.pendingTimers).toBe(1);
  });

  it('ignores a late rejection of an abandoned function', async () => {
    const clock = new FakeClock();
    const policy = timeout(10, { clock, strategy: 'forced' });
    const outcome = track(
      policy.execute(async () => {
        await later(clock, 50, null);
        throw new Error('late failure');
      }),
    );
    await clock.advance(50);
    expect((outcome.error as KeelError).code).toBe('policy.timeout');
  });

  it('returns a result that arrives in time and clears its deadline', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock, strategy: 'forced' });
    const outcome = track(policy.execute(() => later(clock, 999, 'in time')));
    await clock.advance(999);
    expect(outcome.value).toBe('in time');
    expect(clock.pendingTimers).toBe(0);
    await expect(policy.execute(() => 'synchronous')).resolves.toBe('synchronous');
    await expect(policy.execute(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(clock.pendingTimers).toBe(0);
  });

  it('serves all running calls with one timer', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock, strategy: 'forced' });
    const never = () => new Promise<never>(() => {});
    const outcomes = [];
    for (let index = 0; index < 100; index++) {
      outcomes.push(track(policy.execute(never)));
      await clock.advance(5);
    }
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(500);
    // Calls started at 0..495 ms are past their deadline (1,000 ms later); the rest are waiting.
    expect(outcomes.filter((outcome) => outcome.settled)).toHaveLength(1);
    await clock.advance(1_000);
    expect(outcomes.every((outcome) => (outcome.error as KeelError).code === 'policy.timeout')).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects at once with the caller reason when the caller aborts, even if the function ignores it', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock, strategy: 'forced' });
    const controller = new AbortController();
    const outcome = track(policy.execute(() => new Promise(() => {}), controller.signal));
    await flushMicrotasks();
    controller.abort('user cancelled');
    await flushMicrotasks();
    expect(outcome).toEqual({ settled: true, error: 'user cancelled' });
    expect(clock.pendingTimers).toBe(0);
    await nextTurn();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the caller reason when the caller aborted while the function was starting', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy: 'forced' });
      const controller = new AbortController();
      let rejectLate!: (error: unknown) => void;
      const outcome = track(
        policy.execute(() => {
          controller.abort('changed my mind');
          return new Promise((_, reject) => {
            rejectLate = reject;
          });
        }, controller.signal),
      );
      await flushMicrotasks();
      expect(outcome).toEqual({ settled: true, error: 'changed my mind' });
      expect(clock.pendingTimers).toBe(0);
      // Nobody waits for the abandoned function any more: its late failure must not surface as unhandled.
      rejectLate(new Error('late failure'));
      await flushMicrotasks();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('emits onTimeout with its strategy', async () => {
    const clock = new FakeClock();
    const policy = timeout(10, { clock, strategy: 'forced' });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((event) => events.push(event));
    track(policy.execute(() => new Promise(() => {})));
    await clock.advance(10);
    expect(events).toEqual([{ timeoutMs: 10, strategy: 'forced' }]);
  });
});

describe('timeout: no leaks', () => {
  const strategies = ['cooperative', 'forced'] as const;

  for (const strategy of strategies) {
    it(`${strategy}: 10,000 calls leave no abort listener on the caller's signal and no timer`, async () => {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy });
      const controller = new AbortController();
      for (let index = 0; index < 10_000; index++) {
        // Alternate: functions that read their signal (a controller, a listener and in cooperative mode a timer
        // each) and functions that do not.
        const fn =
          index % 2 === 0
            ? ({ signal }: PolicyContext) => (signal.aborted ? 'aborted' : 'read')
            : () => Promise.resolve('ignored');
        await policy.execute(fn, controller.signal);
        // Sequential calls share one listener on the caller's signal; it goes on the next turn of the event loop.
        expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
        if (index % 1_000 === 0) {
          await nextTurn();
          expect(getEventListeners(controller.signal, 'abort').length).toBe(0);
        }
      }
      await nextTurn();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);
    });

    it(`${strategy}: 10,000 timed-out calls leave nothing behind either`, async () => {
      const clock = new FakeClock();
      const policy = timeout(10, { clock, strategy });
      const controller = new AbortController();
      // 10,000 calls listen to it at once, on purpose.
      setMaxListeners(0, controller.signal);
      const outcomes = [];
      // Alternate: functions that read their signal at once and listen to it, and functions that await past the
      // deadline before their first read (the signal is then born aborted).
      const readsLate = async (context: PolicyContext) => {
        await later(clock, 20, null);
        context.signal.throwIfAborted();
        return 'unreachable';
      };
      for (let index = 0; index < 10_000; index++) {
        const fn = index % 2 === 0 ? obedient(clock, 20) : readsLate;
        outcomes.push(track(policy.execute(fn, controller.signal)));
      }
      await clock.advance(20);
      expect(
        outcomes.filter((outcome) => (outcome.error as KeelError)?.code === 'policy.timeout'),
      ).toHaveLength(10_000);
      await nextTurn();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);
    });
  }
});

describe('timeout options', () => {
  it('rejects invalid input with config.invalid', () => {
    const cases: Array<[unknown, unknown]> = [
      [0, {}],
      [-5, {}],
      [Number.NaN, {}],
      [Number.POSITIVE_INFINITY, {}],
      [2 ** 31, {}],
      ['1000', {}],
      [1_000, { strategy: 'pessimistic' }],
      [1_000, { code: 'timeout' }],
      [1_000, { clock: { now: () => 0 } }],
      [1_000, { timeout: 5 }],
      [1_000, null],
    ];
    for (const [timeoutMs, options] of cases) {
      let caught: unknown;
      try {
        timeout(timeoutMs as never, options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code === 'config.invalid', String(timeoutMs)).toBe(true);
    }
  });
});
