import { type ErrorCode, isErrorCode } from '../errors/codes.js';
import { optionError } from '../options/option-error.js';
import { type Clock, systemClock } from './clock.js';
import { toContext } from './context.js';
import { DeadlineQueue } from './deadline-queue.js';
import { MAX_DELAY_MS } from './delays.js';
import { Emitter } from './events.js';
import type { Event, Policy, PolicyFunction, SignalInput } from './policy.js';
import { ignoreRejection, isPromiseLike } from './promise.js';
import { TimeoutCall, type TimeoutSettings } from './timeout-call.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireNonNegativeNumber,
  requireOptionsObject,
} from './validate.js';

/**
 * How a timeout ends a call.
 *
 * - `cooperative`: at the deadline the function's signal aborts; the policy still waits for the function. A result
 *   that arrives late is returned; a rejection after the abort becomes the timeout error.
 * - `forced`: at the deadline the call rejects with the timeout error whether or not the function has stopped (its
 *   signal aborts too). A caller's cancellation also rejects at once. Use it for functions that ignore their signal.
 *
 * In both modes the function's signal aborts only when the call is abandoned: with the timeout error at the deadline,
 * or with the caller's reason on cancellation. A function that settles in time keeps its signal alive, so what it
 * returned (a `fetch` Response whose body is still to be read) stays readable. A function that first reads its signal
 * after being abandoned (say, a step awaited past the deadline, then `fetch(url, { signal })`) gets a signal that is
 * already aborted.
 */
export type TimeoutStrategy = 'cooperative' | 'forced';

/** Options of {@link timeout}. */
export interface TimeoutOptions {
  /**
   * See {@link TimeoutStrategy}. Either way the function's signal is aborted when the call is abandoned: with the
   * timeout error or the caller's reason; never because the function settled in time. Defaults to `'cooperative'`.
   */
  strategy?: TimeoutStrategy;
  /** The code of the timeout error, such as `tool.timeout` or `network.timeout`. Defaults to `'policy.timeout'`. */
  code?: ErrorCode;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/**
 * Emitted once per call that times out, when the deadline is noticed: at the deadline when the function's signal
 * exists (or in forced mode), otherwise when the function first reads `aborted` or `signal` after it.
 */
export interface TimeoutEvent {
  readonly timeoutMs: number;
  readonly strategy: TimeoutStrategy;
}

/** A timeout policy with its event. */
export interface TimeoutPolicy extends Policy {
  readonly onTimeout: Event<TimeoutEvent>;
}

/**
 * Gives a call `timeoutMs` to finish. The timeout error is a KeelError with `code` (default `policy.timeout`) and
 * `data.timeoutMs`. A caller's cancellation is never a timeout: it ends the call with the caller's signal reason, and
 * a control signal thrown by the function passes through as it is.
 *
 * The function's signal aborts at the deadline (with the timeout error) or when the caller cancels (with the
 * caller's reason): work started with it ends with an abandoned call, and a signal first read after either is born
 * aborted with the same reason. A call that settles in time leaves its signal alone: a `fetch` Response returned
 * unread can be read after `execute` has resolved, and the success path costs no `abort()`. From then on the signal
 * no longer follows the caller's; a function that leaves work running after it returns and wants it cancelled with
 * the caller should give that work the caller's signal.
 *
 * In cooperative mode a call whose function never reads `context.signal` costs no timer and no AbortController: the
 * start time is noted, and the signal (linked to the caller's, aborting at the deadline) is only made on first read.
 * Either mode keeps one timer per policy for all its running calls. Everything is released when a call settles; the
 * signal of a call that settled in time and that nothing listens to any more (no `abort` listener, no
 * `AbortSignal.any` made from it) is handed to a later call of any timeout, since making one costs microseconds on
 * Node 20. Work that outlives its call and must follow that signal listens to it before the function returns.
 *
 * @example
 *   const toolTimeout = timeout(5_000, { code: 'tool.timeout' });
 *   const response = await toolTimeout.execute(({ signal }) => fetch(url, { signal }), callerSignal);
 *   const weather = await response.json(); // the call settled in time: its signal is still alive
 */
export function timeout(timeoutMs: number, options: TimeoutOptions = {}): TimeoutPolicy {
  const timeouts = new Emitter<TimeoutEvent>();
  const settings = validate(timeoutMs, options, timeouts);

  async function cooperative<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
    const parent = toContext(signal);
    if (parent.aborted) throw parent.signal.reason;
    const call = new TimeoutCall(settings, parent);
    try {
      return await fn(call);
    } catch (error) {
      throw call.failure(error);
    } finally {
      call.release();
    }
  }

  function forced<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
    const parent = toContext(signal);
    if (parent.aborted) return Promise.reject(parent.signal.reason);
    const call = new TimeoutCall(settings, parent);
    let result: PromiseLike<T> | T;
    try {
      result = fn(call);
    } catch (error) {
      const reason = call.failure(error);
      call.release();
      return Promise.reject(reason);
    }
    // A synchronous result needs no deadline: nothing was queued, so nothing is left to clear but a listener.
    if (!isPromiseLike(result)) {
      call.release();
      return Promise.resolve(result);
    }
    const pending = result;
    return new Promise<T>((resolve, reject) => {
      call.forced = { resolve: resolve as (value: unknown) => void, reject };
      settings.queue.add(call, call.startMs + settings.timeoutMs);
      // A forced call must end at once on cancellation even if the function ignores its signal.
      call.listenToParent();
      if (call.isReleased) {
        // Cancelled while the function started: nobody waits for its outcome, but a late rejection must not surface
        // as an unhandled one.
        pending.then(undefined, ignoreRejection);
        return;
      }
      pending.then(
        (value) => call.settle(true, value),
        (error) => call.settle(false, error),
      );
    });
  }

  return { execute: settings.strategy === 'cooperative' ? cooperative : forced, onTimeout: timeouts.event };
}

const FACTORY = 'timeout';

function validate(
  timeoutMs: number,
  options: TimeoutOptions,
  timeouts: Emitter<TimeoutEvent>,
): TimeoutSettings {
  requireNonNegativeNumber(timeoutMs, 'timeoutMs', FACTORY, {
    minimum: Number.MIN_VALUE,
    maximum: MAX_DELAY_MS,
  });
  requireOptionsObject(options, FACTORY, "{ strategy: 'forced' }");
  rejectUnknownOptions(options, ['strategy', 'code', 'clock'], FACTORY);
  const strategy = options.strategy ?? 'cooperative';
  if (strategy !== 'cooperative' && strategy !== 'forced') {
    throw optionError({
      where: FACTORY,
      option: 'strategy',
      message: `strategy must be 'cooperative' or 'forced', got ${String(strategy)}`,
    });
  }
  const code = options.code ?? 'policy.timeout';
  if (!isErrorCode(code)) {
    throw optionError({
      where: FACTORY,
      option: 'code',
      message: `code must be a keel error code such as 'tool.timeout', got ${String(code)}`,
    });
  }
  const clock: Clock = requireClock(options.clock ?? systemClock, FACTORY);
  const queue = new DeadlineQueue(clock);
  return { timeoutMs, strategy, code, clock, timeouts, queue };
}
