// What a timeout's signal costs when the function reads it: signals nothing holds any more are handed on instead of
// made again, calls share one listener on the caller's signal and one timer per policy, and nothing of that reaches
// a signal somebody still listens to.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import type { PolicyContext } from './policy.js';
import { timeout } from './timeout.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs until its signal aborts, then rejects with the reason, as a well-behaved call does. */
function untilAborted({ signal }: PolicyContext): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
}

describe('timeout: the signal of a call that settled in time and that nothing holds is handed on', () => {
  const Original = globalThis.AbortController;
  let created = 0;
  beforeEach(() => {
    created = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created++;
      }
    };
  });
  afterEach(() => {
    globalThis.AbortController = Original;
  });

  for (const strategy of ['cooperative', 'forced'] as const) {
    it(`${strategy}: 1,000 sequential calls that read their signal make at most two AbortControllers`, async () => {
      const clock = new FakeClock();
      const policy = timeout(1_000, { clock, strategy });
      const caller = new Original();
      for (let index = 0; index < 1_000; index++) {
        const result = await policy.execute(
          ({ signal }: PolicyContext) => (signal.aborted ? 'aborted' : 'read'),
          caller.signal,
        );
        expect(result).toBe('read');
      }
      expect(created).toBeLessThanOrEqual(2);
      await nextTurn();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(clock.pendingTimers).toBe(0);
    });
  }

  it('a signal something still listens to (as fetch does) is kept by its call: a later timeout leaves it alive', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    let kept: AbortSignal | undefined;
    await policy.execute(({ signal }) => {
      kept = signal;
      signal.addEventListener('abort', () => {});
      return 'settled';
    });
    let next: AbortSignal | undefined;
    const late = policy
      .execute((context) => {
        next = context.signal;
        return untilAborted(context);
      })
      .catch((error: KeelError) => error.code);
    await clock.advance(100);
    await expect(late).resolves.toBe('policy.timeout');
    expect(next).not.toBe(kept);
    expect(next?.aborted).toBe(true);
    expect(kept?.aborted).toBe(false);
  });

  it('a signal another was made from with AbortSignal.any is kept by its call', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    let kept: AbortSignal | undefined;
    let dependant: AbortSignal | undefined;
    await policy.execute(({ signal }) => {
      kept = signal;
      dependant = AbortSignal.any([signal]);
      return 'settled';
    });
    let next: AbortSignal | undefined;
    const late = policy
      .execute((context) => {
        next = context.signal;
        return untilAborted(context);
      })
      .catch(() => 'timed out');
    await clock.advance(100);
    await expect(late).resolves.toBe('timed out');
    expect(next?.aborted).toBe(true);
    expect(next).not.toBe(kept);
    expect(dependant?.aborted).toBe(false);
  });

  it('a call whose signal went back to the pool hands out the caller’s signal when read again', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const caller = new Original();
    let context: PolicyContext | undefined;
    await policy.execute((received) => {
      context = received;
      return received.signal.aborted;
    }, caller.signal);
    expect(context?.signal).toBe(caller.signal);
    expect(context?.aborted).toBe(false);
  });
});

describe('timeout: calls share one listener on the caller’s signal and one timer', () => {
  it('a caller’s abort reaches every running call through one listener, gone on the next turn', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock });
    const caller = new AbortController();
    const signals: AbortSignal[] = [];
    const outcomes = Array.from({ length: 3 }, () =>
      policy
        .execute((context) => {
          signals.push(context.signal);
          return untilAborted(context);
        }, caller.signal)
        .catch((error: unknown) => error),
    );
    await flushMicrotasks();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    // Three running calls, one timer: the policy's deadline queue serves them all.
    expect(clock.pendingTimers).toBe(1);
    caller.abort('stop');
    expect(await Promise.all(outcomes)).toEqual(['stop', 'stop', 'stop']);
    expect(signals.map((signal) => signal.reason)).toEqual(['stop', 'stop', 'stop']);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a listener left by a burst of calls is removed on the next turn of the event loop', async () => {
    const clock = new FakeClock();
    const policy = timeout(1_000, { clock });
    const caller = new AbortController();
    for (let index = 0; index < 100; index++) {
      await policy.execute(({ signal }) => signal.aborted, caller.signal);
    }
    expect(getEventListeners(caller.signal, 'abort').length).toBeLessThanOrEqual(1);
    await nextTurn();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    // A call after that follows the caller again.
    const running = policy.execute(untilAborted, caller.signal).catch((error: unknown) => error);
    await flushMicrotasks();
    caller.abort('stop');
    await expect(running).resolves.toBe('stop');
  });
});
