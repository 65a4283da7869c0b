import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { type HedgeEvent, hedge } from './hedge.js';
import type { PolicyContext } from './policy.js';

interface Attempt {
  context: PolicyContext;
  resolve: (value: string) => void;
  reject: (error: unknown) => void;
}

/** A function whose every call waits until the test settles it. */
function controllable() {
  const attempts: Attempt[] = [];
  const fn = (context: PolicyContext) =>
    new Promise<string>((resolve, reject) => {
      attempts.push({ context, resolve, reject });
    });
  return { attempts, fn };
}

describe('hedge', () => {
  const OriginalAbortController = globalThis.AbortController;
  let controllersCreated = 0;
  beforeEach(() => {
    controllersCreated = 0;
    globalThis.AbortController = class extends OriginalAbortController {
      constructor() {
        super();
        controllersCreated++;
      }
    };
  });
  afterEach(() => {
    globalThis.AbortController = OriginalAbortController;
  });

  it('validates its options with messages naming the option', () => {
    const bad = [
      [undefined, /options must be an object such as \{ delayMs: 500 \}/],
      [{}, /delayMs must be a number of milliseconds from 0 to 2147483647, got undefined/],
      [{ delayMs: -1 }, /delayMs must be a number of milliseconds from 0/],
      [{ delayMs: Number.POSITIVE_INFINITY }, /delayMs must be .* to 2147483647, got Infinity/],
      // Node fires a longer timer after 1 ms: every call would be hedged at once.
      [{ delayMs: 2 ** 31 }, /delayMs must be .* to 2147483647, got 2147483648/],
      [{ delayMs: 10, maxHedgedAttempts: 1.5 }, /maxHedgedAttempts must be an integer >= 0, got 1.5/],
      [
        { delayMs: 10, clock: { now: () => 0 } },
        /clock must be a Clock with now\(\), setTimeout\(\) and clearTimeout\(\)/,
      ],
      [
        { delayMs: 10, maxHedges: 2 },
        /^Unknown hedge option maxHedges \(known: delayMs, maxHedgedAttempts, clock\)$/,
      ],
    ] as const;
    for (const [options, message] of bad) {
      let caught: unknown;
      try {
        hedge(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code).toBe('config.invalid');
      expect((caught as Error).message).toMatch(message);
    }
  });

  it('does not hedge a call that settles in time, and creates no AbortController', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const events: HedgeEvent[] = [];
    policy.onHedge((event) => events.push(event));
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    await clock.advance(99);
    attempts[0]!.resolve('fast');
    await expect(result).resolves.toBe('fast');
    await clock.advance(1_000);
    expect(attempts).toHaveLength(1);
    expect(events).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
    expect(controllersCreated).toBe(0);
  });

  it('starts a second attempt after delayMs; the first success wins and the loser is aborted', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const events: HedgeEvent[] = [];
    policy.onHedge((event) => events.push(event));
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    await clock.advance(100);
    expect(attempts).toHaveLength(2);
    expect(events).toEqual([{ attempt: 2, delayMs: 100 }]);
    const firstSignal = attempts[0]!.context.signal;
    expect(attempts[1]!.context.signal).not.toBe(firstSignal);

    attempts[1]!.resolve('hedged');
    await expect(result).resolves.toBe('hedged');
    expect(firstSignal.aborted).toBe(true);
    expect((firstSignal.reason as DOMException).name).toBe('AbortError');
    // The winner settled: its signal stays alive, for what it returned.
    expect(attempts[1]!.context.signal.aborted).toBe(false);
    // The loser's late answer changes nothing.
    attempts[0]!.reject(firstSignal.reason);
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(0);
  });

  it('lets the first attempt win after a hedge started, aborting the hedge', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 50, clock });
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    await clock.advance(50);
    attempts[0]!.resolve('original');
    await expect(result).resolves.toBe('original');
    expect(attempts[1]!.context.aborted).toBe(true);
    expect(attempts[1]!.context.signal.aborted).toBe(true);
  });

  it('starts up to maxHedgedAttempts extra attempts, delayMs apart', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, maxHedgedAttempts: 2, clock });
    const events: HedgeEvent[] = [];
    policy.onHedge((event) => events.push(event));
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    await clock.advance(100);
    expect(attempts).toHaveLength(2);
    await clock.advance(100);
    expect(attempts).toHaveLength(3);
    await clock.advance(1_000);
    expect(attempts).toHaveLength(3);
    expect(events.map((event) => event.attempt)).toEqual([2, 3]);
    attempts[2]!.resolve('third');
    await expect(result).resolves.toBe('third');
    expect(attempts[0]!.context.aborted && attempts[1]!.context.aborted).toBe(true);
  });

  it('waits for every attempt and rejects with the last failure when all fail', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    let settled = false;
    result.catch(() => {}).finally(() => (settled = true));
    await clock.advance(100);
    const last = new KeelError('provider.overloaded', 'second failed');
    attempts[0]!.reject(new KeelError('network.timeout', 'first failed'));
    await flushMicrotasks();
    expect(settled).toBe(false);
    attempts[1]!.reject(last);
    await expect(result).rejects.toBe(last);
  });

  it('keeps waiting for a running hedge when the other attempt fails, and takes its success', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    await clock.advance(100);
    attempts[0]!.reject(new Error('first failed'));
    await flushMicrotasks();
    attempts[1]!.resolve('rescued');
    await expect(result).resolves.toBe('rescued');
  });

  it('does not hedge an attempt that failed before delayMs (that is retry’s job)', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    const failure = new Error('quick failure');
    attempts[0]!.reject(failure);
    await expect(result).rejects.toBe(failure);
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(500);
    expect(attempts).toHaveLength(1);
  });

  it('handles a function that throws synchronously', async () => {
    const clock = new FakeClock();
    const failure = new Error('sync');
    await expect(
      hedge({ delayMs: 10, clock }).execute(() => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(clock.pendingTimers).toBe(0);
  });

  it('never hedges with maxHedgedAttempts 0', async () => {
    const clock = new FakeClock();
    const { attempts, fn } = controllable();
    const result = hedge({ delayMs: 0, maxHedgedAttempts: 0, clock }).execute(fn);
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(100);
    attempts[0]!.resolve('alone');
    await expect(result).resolves.toBe('alone');
    expect(attempts).toHaveLength(1);
  });

  it('stops listening to the caller’s signal once settled', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const { attempts, fn } = controllable();
    const result = hedge({ delayMs: 10, clock }).execute(fn, controller.signal);
    await clock.advance(10);
    // Both attempts read their signals, which follow the caller's.
    for (const attempt of attempts) void attempt.context.signal;
    expect(getEventListeners(controller.signal, 'abort').length).toBeGreaterThan(0);
    attempts[1]!.resolve('done');
    await result;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaves the signal of an attempt that settles alive; only losers are aborted', async () => {
    const clock = new FakeClock();
    const policy = hedge({ delayMs: 100, clock });
    const { attempts, fn } = controllable();
    const result = policy.execute(fn);
    const firstSignal = attempts[0]!.context.signal;
    await clock.advance(100);
    const secondSignal = attempts[1]!.context.signal;
    attempts[0]!.reject(new Error('first failed'));
    await flushMicrotasks();
    // The failed attempt is over (nothing of it is left to abandon), the hedge still runs.
    expect(firstSignal.aborted).toBe(false);
    expect(secondSignal.aborted).toBe(false);
    attempts[1]!.resolve('rescued');
    await expect(result).resolves.toBe('rescued');
    expect(firstSignal.aborted).toBe(false);
    expect(secondSignal.aborted).toBe(false);
  });

  it('hands the caller’s signal to an attempt that first reads it after it settled, with no AbortController', async () => {
    const clock = new FakeClock();
    const caller = new OriginalAbortController();
    let context: PolicyContext | undefined;
    await hedge({ delayMs: 100, clock }).execute((received) => {
      context = received;
      return 'quick';
    }, caller.signal);
    expect(context?.aborted).toBe(false);
    expect(context?.signal).toBe(caller.signal);
    expect(controllersCreated).toBe(0);
  });

  it('gives each attempt the caller’s attempt number', async () => {
    const clock = new FakeClock();
    const parent: PolicyContext = { signal: new AbortController().signal, aborted: false, attempt: 3 };
    const { attempts, fn } = controllable();
    const result = hedge({ delayMs: 10, clock }).execute(fn, parent);
    await clock.advance(10);
    expect(attempts.map((attempt) => attempt.context.attempt)).toEqual([3, 3]);
    attempts[0]!.resolve('x');
    await result;
  });
});
