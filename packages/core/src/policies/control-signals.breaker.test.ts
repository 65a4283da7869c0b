// Control signals are not errors: the circuit breaker never counts a cancellation or a control signal as a failure,
// always frees a probe slot for them, and rethrows them as they are (an abort as the signal's reason).
import { describe, expect, it, vi } from 'vitest';
import { CONTROL_SIGNAL, type ControlSignal } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import { consecutive } from './breaker/consecutive.js';
import { circuitBreaker } from './circuit-breaker.js';
import { toContext } from './context.js';

const serverError = () => new KeelError('provider.server_error', 'upstream 503');

function setup() {
  const clock = new FakeClock(0);
  const isFailure = vi.fn(() => true);
  const breaker = circuitBreaker({
    strategy: consecutive({ threshold: 2 }),
    halfOpenAfterMs: 1_000,
    clock,
    isFailure,
  });
  const trip = async () => {
    for (const _ of [1, 2]) await breaker.execute(() => Promise.reject(serverError())).catch(() => undefined);
    isFailure.mockClear();
  };
  return { clock, breaker, isFailure, trip };
}

const stopRun = (): ControlSignal & { directive: string } => ({ [CONTROL_SIGNAL]: true, directive: 'stop' });

describe('circuit breaker and control signals', () => {
  it('rethrows a control signal as it is and never counts it', async () => {
    const { breaker, isFailure } = setup();
    for (const _ of [1, 2, 3]) {
      const signal = stopRun();
      await expect(breaker.execute(() => Promise.reject(signal))).rejects.toBe(signal);
    }
    expect(breaker.state).toBe('closed');
    expect(breaker.toJSON().window).toEqual({ failures: 0, calls: 0 });
    expect(isFailure).not.toHaveBeenCalled();
  });

  // A peer shipped a breaker that counted cancellations as failures and opened on a user pressing stop.
  it('never counts a call cancelled by the caller, and rejects with the signal reason', async () => {
    const { breaker, isFailure } = setup();
    for (const _ of [1, 2, 3]) {
      const controller = new AbortController();
      const reason = new Error('user pressed stop');
      const call = breaker.execute(
        (context) =>
          new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(new Error('socket closed'))),
          ),
        controller.signal,
      );
      controller.abort(reason);
      await expect(call).rejects.toBe(reason);
    }
    expect(breaker.state).toBe('closed');
    expect(isFailure).not.toHaveBeenCalled();
  });

  it('rejects a call whose signal is already aborted without running it or taking a probe slot', async () => {
    const { breaker, trip, clock } = setup();
    await trip();
    await clock.advance(1_000);
    const controller = new AbortController();
    controller.abort('gone');
    const fn = vi.fn(() => 'ran');
    await expect(breaker.execute(fn, controller.signal)).rejects.toBe('gone');
    expect(fn).not.toHaveBeenCalled();
    // The probe slot is still free.
    await expect(breaker.execute(() => 'probe')).resolves.toBe('probe');
    expect(breaker.state).toBe('closed');
  });

  it('frees the probe slot of a cancelled probe without reopening', async () => {
    const { breaker, trip, clock, isFailure } = setup();
    await trip();
    await clock.advance(1_000);
    const controller = new AbortController();
    const probe = breaker.execute(
      (context) =>
        new Promise((_resolve, reject) =>
          context.signal.addEventListener('abort', () => reject(context.signal.reason)),
        ),
      controller.signal,
    );
    controller.abort('cancelled by caller');
    await expect(probe).rejects.toBe('cancelled by caller');
    expect(breaker.state).toBe('half-open');
    expect(isFailure).not.toHaveBeenCalled();
    await expect(breaker.execute(() => 'next probe')).resolves.toBe('next probe');
    expect(breaker.state).toBe('closed');
  });

  it('frees the probe slot of a probe that throws a control signal, and rethrows it', async () => {
    const { breaker, trip, clock } = setup();
    await trip();
    await clock.advance(1_000);
    const signal = stopRun();
    await expect(breaker.execute(() => Promise.reject(signal))).rejects.toBe(signal);
    expect(breaker.state).toBe('half-open');
    await expect(breaker.execute(() => 'probe')).resolves.toBe('probe');
  });

  it('rethrows a control signal as it is even when the caller has aborted too', async () => {
    const { breaker } = setup();
    const controller = new AbortController();
    const signal = stopRun();
    const call = breaker.execute(
      (context) =>
        new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(signal))),
      toContext(controller.signal),
    );
    controller.abort('caller reason');
    await expect(call).rejects.toBe(signal);
  });

  it('does not open on a timeout cancellation from an enclosing policy either', async () => {
    const { breaker } = setup();
    for (const _ of [1, 2]) {
      const controller = new AbortController();
      const timeout = new KeelError('policy.timeout', 'outer timeout');
      const call = breaker.execute(
        (context) =>
          new Promise((_resolve, reject) =>
            context.signal.addEventListener('abort', () => reject(serverError())),
          ),
        controller.signal,
      );
      controller.abort(timeout);
      await expect(call).rejects.toBe(timeout);
    }
    expect(breaker.state).toBe('closed');
  });
});
