import { describe, expect, it } from 'vitest';
import { CONTROL_SIGNAL, type ControlSignal } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { constant } from './delays.js';
import type { PolicyContext } from './policy.js';
import { retry } from './retry.js';
import { retryBudget } from './retry-budget.js';
import { timeout } from './timeout.js';

/** A control signal as a tool would throw it to stop the run. */
const stopRun = (): ControlSignal & { kind: string } => ({ [CONTROL_SIGNAL]: true, kind: 'stop-run' });

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('control signals: retry', () => {
  function watchedRetry(clock: FakeClock) {
    const budget = retryBudget({ maxRetries: 10, ratio: false });
    const seen = { retryIf: 0, giveUps: 0, retries: 0 };
    const policy = retry({
      clock,
      budget,
      maxAttempts: 5,
      delay: constant(10),
      retryIf: () => {
        seen.retryIf++;
        return true;
      },
    });
    policy.onGiveUp(() => seen.giveUps++);
    policy.onRetry(() => seen.retries++);
    return { policy, budget, seen };
  }

  it('never retries a cancellation, even when retryIf would retry anything', async () => {
    const clock = new FakeClock();
    const { policy, budget, seen } = watchedRetry(clock);
    const controller = new AbortController();
    const reason = new Error('caller left');
    let calls = 0;
    const outcome = track(
      policy.execute(() => {
        calls++;
        controller.abort(reason);
        // A retryable error thrown because of the abort must not be mistaken for a fault.
        throw new KeelError('network.connection', 'request aborted');
      }, controller.signal),
    );
    await clock.advance(1_000);
    expect(outcome.error).toBe(reason);
    expect(calls).toBe(1);
    expect(seen).toEqual({ retryIf: 0, giveUps: 0, retries: 0 });
    expect(budget.snapshot().spent).toBe(0);
  });

  it('passes a control signal thrown by the function through untouched, on any attempt', async () => {
    const clock = new FakeClock();
    const { policy, budget, seen } = watchedRetry(clock);
    const signal = stopRun();
    let calls = 0;
    const outcome = track(
      policy.execute(() => {
        calls++;
        if (calls === 1) throw new KeelError('provider.overloaded', 'busy');
        throw signal;
      }),
    );
    await clock.advance(1_000);
    expect(outcome.error).toBe(signal);
    expect(calls).toBe(2);
    // The one retry was for the overload; the control signal itself was never judged, counted or retried.
    expect(seen).toEqual({ retryIf: 1, giveUps: 0, retries: 1 });
    expect(budget.snapshot().spent).toBe(1);
  });

  it('passes an abort whose reason is a control signal through as that reason', async () => {
    const clock = new FakeClock();
    const { policy } = watchedRetry(clock);
    const interrupt = stopRun();
    const controller = new AbortController();
    const outcome = track(
      policy.execute(
        ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(1))),
        controller.signal,
      ),
    );
    await flushMicrotasks();
    controller.abort(interrupt);
    await clock.advance(1_000);
    expect(outcome.error).toBe(interrupt);
  });
});

describe('control signals: timeout', () => {
  for (const strategy of ['cooperative', 'forced'] as const) {
    it(`${strategy}: a caller's cancellation is the caller's reason, never a timeout`, async () => {
      const clock = new FakeClock();
      const policy = timeout(100, { clock, strategy });
      const controller = new AbortController();
      const reason = new Error('caller left');
      const outcome = track(
        policy.execute(
          ({ signal }: PolicyContext) =>
            new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
          controller.signal,
        ),
      );
      await clock.advance(50);
      controller.abort(reason);
      await clock.advance(100);
      expect(outcome.error).toBe(reason);
    });

    it(`${strategy}: a caller's signal aborted before the call is rethrown and the function never runs`, async () => {
      const policy = timeout(100, { clock: new FakeClock(), strategy });
      let calls = 0;
      const reason = stopRun();
      await expect(policy.execute(() => calls++, AbortSignal.abort(reason))).rejects.toBe(reason);
      expect(calls).toBe(0);
    });

    it(`${strategy}: a control signal thrown by the function passes through untouched`, async () => {
      const clock = new FakeClock();
      const policy = timeout(100, { clock, strategy });
      const signal = stopRun();
      await expect(
        policy.execute(() => {
          throw signal;
        }),
      ).rejects.toBe(signal);
      await expect(policy.execute(() => Promise.reject(signal))).rejects.toBe(signal);
    });
  }

  it('cooperative: a control signal thrown after the deadline is not turned into a timeout', async () => {
    const clock = new FakeClock();
    const policy = timeout(100, { clock });
    const signal = stopRun();
    const outcome = track(
      policy.execute(
        ({ signal: abortSignal }) =>
          new Promise((_, reject) => abortSignal.addEventListener('abort', () => reject(signal))),
      ),
    );
    await clock.advance(100);
    expect(outcome.error).toBe(signal);
  });
});
