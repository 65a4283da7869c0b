import { type ErrorCode, isErrorCode } from '../errors/codes.js';
import { isControlSignal } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import { type Clock, systemClock, type TimerHandle } from './clock.js';
import { NEVER_ABORTED_SIGNAL, toContext } from './context.js';
import { type DeadlineEntry, DeadlineQueue } from './deadline-queue.js';
import { MAX_DELAY_MS } from './delays.js';
import { EventEmitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';

/**
 * How a timeout ends a call.
 *
 * - `cooperative`: at the deadline the function's signal aborts; the policy still waits for the function. A result
 *   that arrives late is returned; a rejection after the abort becomes the timeout error.
 * - `forced`: at the deadline the call rejects with the timeout error whether or not the function has stopped (its
 *   signal aborts too). A caller's cancellation also rejects at once. Use it for functions that ignore their signal.
 */
export type TimeoutStrategy = 'cooperative' | 'forced';

/** Options of {@link timeout}. */
export interface TimeoutOptions {
  /** See {@link TimeoutStrategy}. Defaults to `'cooperative'`. */
  strategy?: TimeoutStrategy;
  /** The code of the timeout error, such as `tool.timeout` or `network.timeout`. Defaults to `'policy.timeout'`. */
  code?: ErrorCode;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted when a deadline passes and the policy acts on it (aborts the signal, or in forced mode rejects). */
export interface TimeoutEvent {
  readonly timeoutMs: number;
  readonly strategy: TimeoutStrategy;
}

/** A timeout policy with its event. */
export interface TimeoutPolicy extends Policy {
  readonly onTimeout: Event<TimeoutEvent>;
}

interface Settings {
  timeoutMs: number;
  strategy: TimeoutStrategy;
  code: ErrorCode;
  clock: Clock;
  timeouts: EventEmitter<TimeoutEvent>;
  /** Forced mode only: the deadlines of running calls, served by one timer. */
  queue: DeadlineQueue | undefined;
}

/**
 * Gives a call `timeoutMs` to finish. The timeout error is a KeelError with `code` (default `policy.timeout`) and
 * `data.timeoutMs`. A caller's cancellation is never a timeout: it ends the call with the caller's signal reason, and
 * a control signal thrown by the function passes through as it is.
 *
 * In cooperative mode a call whose function never reads `context.signal` costs no timer and no AbortController: the
 * start time is noted, and the signal (linked to the caller's, aborting at the deadline) is only made on first read.
 * Forced mode keeps one timer per policy for all its running calls. Everything is released when a call settles.
 *
 * @example
 *   const toolTimeout = timeout(5_000, { code: 'tool.timeout' });
 *   const weather = await toolTimeout.execute(({ signal }) => fetch(url, { signal }), callerSignal);
 */
export function timeout(timeoutMs: number, options: TimeoutOptions = {}): TimeoutPolicy {
  const timeouts = new EventEmitter<TimeoutEvent>();
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
      settings.queue!.add(call, call.startMs + settings.timeoutMs);
      // A forced call must end at once on cancellation even if the function ignores its signal.
      call.listenToParent();
      if (call.isReleased) return;
      pending.then(
        (value) => call.settle(true, value),
        (error) => call.settle(false, error),
      );
    });
  }

  return { execute: settings.queue === undefined ? cooperative : forced, onTimeout: timeouts.event };
}

/** One call's state, and the context its function receives. */
class TimeoutCall implements PolicyContext, DeadlineEntry {
  readonly startMs: number;
  private controller: AbortController | undefined;
  private timer: TimerHandle | undefined;
  private parentSignal: AbortSignal | undefined;
  // Made only when a call starts listening, so a call that never does allocates no closure.
  private parentListener: (() => void) | undefined;
  private timedOut = false;
  private released = false;
  private error: KeelError | undefined;
  forced: { resolve: (value: unknown) => void; reject: (reason: unknown) => void } | undefined;
  previous: DeadlineEntry | undefined;
  next: DeadlineEntry | undefined;
  dueAtMs = 0;
  queued = false;

  constructor(
    private readonly settings: Settings,
    private readonly parent: PolicyContext,
  ) {
    this.startMs = settings.clock.now();
  }

  get attempt(): number {
    return this.parent.attempt;
  }

  get aborted(): boolean {
    if (this.controller !== undefined) return this.controller.signal.aborted;
    if (this.parent.aborted) return true;
    // Without a signal nobody is told at the deadline, so the deadline is noticed here, when the function asks.
    if (
      !this.timedOut &&
      !this.released &&
      this.settings.clock.now() - this.startMs >= this.settings.timeoutMs
    ) {
      this.timedOut = true;
    }
    return this.timedOut;
  }

  get signal(): AbortSignal {
    return this.controller?.signal ?? this.createSignal();
  }

  private createSignal(): AbortSignal {
    const controller = new AbortController();
    this.controller = controller;
    if (this.released) return controller.signal;
    if (this.parent.aborted) {
      controller.abort(this.parent.signal.reason);
      return controller.signal;
    }
    const elapsedMs = this.settings.clock.now() - this.startMs;
    if (this.timedOut || elapsedMs >= this.settings.timeoutMs) {
      this.timedOut = true;
      controller.abort(this.timeoutError());
      return controller.signal;
    }
    this.listenToParent();
    // In forced mode the policy's deadline queue watches the call.
    if (this.settings.queue === undefined) {
      this.timer = this.settings.clock.setTimeout(() => this.expire(), this.settings.timeoutMs - elapsedMs);
    }
    return controller.signal;
  }

  /** Follows the caller's signal (once), and acts at once if it has already aborted. */
  listenToParent(): void {
    if (this.parentSignal === undefined) {
      const parentSignal = this.parent.signal;
      if (parentSignal === NEVER_ABORTED_SIGNAL) return;
      this.parentSignal = parentSignal;
      this.parentListener = () => this.onParentAbort();
      parentSignal.addEventListener('abort', this.parentListener, { once: true });
    }
    // A lazy parent's signal can be born aborted, and a forced call may start listening after an abort it missed.
    if (this.parentSignal.aborted) this.onParentAbort();
  }

  private onParentAbort(): void {
    const reason = this.parentSignal!.reason;
    this.controller?.abort(reason);
    this.forced?.reject(reason);
    if (this.forced !== undefined) this.release();
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Called at the deadline, by this call's timer (cooperative) or the policy's deadline queue (forced). */
  expire(): void {
    this.timer = undefined;
    if (this.released) return;
    this.timedOut = true;
    const error = this.timeoutError();
    const { timeouts, timeoutMs, strategy } = this.settings;
    if (timeouts.hasListeners) timeouts.emit({ timeoutMs, strategy });
    this.controller?.abort(error);
    if (this.forced !== undefined) {
      this.forced.reject(error);
      this.release();
    }
  }

  /** What the caller receives when the function fails with `error`. */
  failure(error: unknown): unknown {
    if (isControlSignal(error)) return error;
    if (this.parent.aborted) return this.parent.signal.reason;
    return this.timedOut ? this.timeoutError() : error;
  }

  /** Forced mode: the function settled (first settlement wins; later ones are ignored). */
  settle(fulfilled: boolean, outcome: unknown): void {
    if (this.released) return;
    const forced = this.forced!;
    if (fulfilled) {
      this.release();
      forced.resolve(outcome);
    } else {
      const reason = this.failure(outcome);
      this.release();
      forced.reject(reason);
    }
  }

  /** Drops the timer, the deadline-queue entry and the parent listener. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.timer !== undefined) {
      this.settings.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.queued) this.settings.queue!.remove(this);
    if (this.parentListener !== undefined)
      this.parentSignal!.removeEventListener('abort', this.parentListener);
  }

  /** One error per call, so the signal's reason and the rejection are the same object. */
  private timeoutError(): KeelError {
    const { code, timeoutMs } = this.settings;
    this.error ??= new KeelError(code, `Timed out after ${timeoutMs} ms`, { data: { timeoutMs } });
    return this.error;
  }
}

function isPromiseLike<T>(value: PromiseLike<T> | T): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

function validate(
  timeoutMs: number,
  options: TimeoutOptions,
  timeouts: EventEmitter<TimeoutEvent>,
): Settings {
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs <= 0 ||
    timeoutMs > MAX_DELAY_MS
  ) {
    throw invalid(
      `timeoutMs must be a number of milliseconds above 0 and at most ${MAX_DELAY_MS}; got ${String(timeoutMs)}`,
    );
  }
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object');
  const known = ['strategy', 'code', 'clock'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalid(`unknown option "${key}"; known options: ${known.join(', ')}`);
  }
  const strategy = options.strategy ?? 'cooperative';
  if (strategy !== 'cooperative' && strategy !== 'forced') {
    throw invalid(`strategy must be 'cooperative' or 'forced'; got ${String(strategy)}`);
  }
  const code = options.code ?? 'policy.timeout';
  if (!isErrorCode(code))
    throw invalid(`code must be a keel error code such as 'tool.timeout'; got ${String(code)}`);
  const clock = options.clock ?? systemClock;
  if (
    typeof clock?.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw invalid('clock must have now(), setTimeout() and clearTimeout() methods');
  }
  const queue = strategy === 'forced' ? new DeadlineQueue(clock) : undefined;
  return { timeoutMs, strategy, code, clock, timeouts, queue };
}

function invalid(message: string): KeelError {
  return new KeelError('config.invalid', `timeout: ${message}`, { data: { where: 'timeout' } });
}
