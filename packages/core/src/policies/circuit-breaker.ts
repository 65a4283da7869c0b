import { isControlSignal } from '../errors/control.js';
import type { KeelError } from '../errors/keel-error.js';
import type {
  BreakerOutcome,
  BreakerRejection,
  BreakerStore,
  BreakerStoreFactory,
  BreakerTicket,
  BreakerTransition,
} from './breaker/breaker-store.js';
import { resolveBreakerOptions } from './breaker/options.js';
import type { BreakerSnapshot, BreakerState } from './breaker/snapshot.js';
import type { BreakerStrategy } from './breaker/strategy.js';
import type { Clock } from './clock.js';
import { toContext } from './context.js';
import { Emitter } from './events.js';
import type { Disposable, Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { isPromiseLike } from './promise.js';
import { rejectionError } from './rejection.js';

/** An open period that grows with each open in a row (a probe failed again). */
export interface OpenDurationOptions {
  /** The first open period, in milliseconds. Required. */
  initialMs: number;
  /** What each further open in a row multiplies the period by. Defaults to 2. */
  factor?: number;
  /** The longest open period, in milliseconds. Defaults to the larger of `initialMs` and 300_000 (5 minutes). */
  maxMs?: number;
}

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Names the breaker in errors and events, such as `openai` or `tool:get_weather`. Defaults to `circuit-breaker`. */
  name?: string;
  /** When a closed breaker opens. Defaults to `consecutive({ threshold: 5 })`. */
  strategy?: BreakerStrategy;
  /**
   * How long the breaker stays open before it lets probes through, in milliseconds: a number for a fixed period,
   * or `{ initialMs, factor, maxMs }` for one that grows while probes keep failing. Defaults to 30_000, fixed.
   */
  halfOpenAfterMs?: number | OpenDurationOptions;
  /** How many probes a half-open breaker runs at once; every other call is rejected at once. Defaults to 1. */
  halfOpenMaxProbes?: number;
  /** Probe successes that close a half-open breaker (any probe failure reopens it first). Defaults to 1. */
  probeSuccessesToClose?: number;
  /**
   * A probe that has not finished after this many milliseconds counts as failed and frees its slot, so a hung
   * probe cannot hold the breaker half-open. Its late result is ignored. Defaults to the first open period
   * (`halfOpenAfterMs`), at least 1_000; set it above your call timeout for slow calls such as long generations.
   */
  probeTimeoutMs?: number;
  /**
   * A call that succeeds but takes longer than this many milliseconds counts as a failure towards the strategy
   * (the caller still gets its value): a dependency that answers too slowly is treated like one that fails, with
   * one threshold for both. Defaults to undefined: durations are not measured, and the clock is not read for it.
   */
  slowCallMs?: number;
  /**
   * Which errors count as failures. Defaults to {@link isDependencyFailure}: everything but the caller's own faults
   * (bad requests, invalid tool input, ...). Control signals and cancellations never reach it. An error it rejects
   * is rethrown untouched, is neither success nor failure, and frees a probe slot.
   */
  isFailure?: (error: unknown) => boolean;
  /**
   * A snapshot from `breaker.toJSON()` to continue from. A half-open snapshot taken while probes ran restores as open
   * until those probes are due (`probesUntilMs`), so that two processes never probe at once; see `BreakerSnapshot`.
   * Defaults to a new closed breaker.
   */
  initialState?: BreakerSnapshot;
  /** Where the state lives. Defaults to `memoryBreakerStore`, state in this process. */
  store?: BreakerStoreFactory;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted when a call is refused with `policy.circuit_open`. */
export interface BreakerRejectedEvent {
  readonly breaker: string;
  readonly state: Exclude<BreakerState, 'closed'>;
  /** Until the open period ends, or the earliest probe deadline; undefined when isolated. */
  readonly remainingMs: number | undefined;
}

/** A hold on an isolated breaker; `dispose` releases it (the last one closes the breaker). Idempotent. */
export interface BreakerIsolation extends Disposable {
  dispose(): Promise<void>;
}

/** A circuit breaker: a {@link Policy} that stops calling a failing dependency for a while. */
export interface CircuitBreaker extends Policy {
  readonly name: string;
  /** The state now (time-driven changes that have fallen due are applied first, with their events). */
  readonly state: BreakerState;
  /** Every change of state. */
  readonly onStateChange: Event<BreakerTransition>;
  /** The breaker opened or was isolated; `error` holds the failure that opened it. */
  readonly onBreak: Event<BreakerTransition>;
  /** The breaker closed: probes succeeded, isolation ended, or `reset()`. */
  readonly onReset: Event<BreakerTransition>;
  /** The open period ended: the next calls are probes. */
  readonly onHalfOpen: Event<BreakerTransition>;
  /** A call was refused. */
  readonly onRejected: Event<BreakerRejectedEvent>;
  /**
   * Holds the breaker open (state `isolated`, calls rejected) until every returned handle is disposed or `reset()`
   * is called. With the in-memory store the breaker is isolated before this returns.
   */
  isolate(): Promise<BreakerIsolation>;
  /** Closes the breaker, releases every isolation and forgets counted outcomes. Immediate with the in-memory store. */
  reset(): Promise<void>;
  /** The durable state, for the `initialState` option of a later breaker. */
  toJSON(): BreakerSnapshot;
}

/**
 * Stops calling a dependency that keeps failing. Closed, it runs calls and lets the strategy count failures; open,
 * it rejects every call at once with `policy.circuit_open` (`retryAfterMs` = time left open; `data`: `breaker`,
 * `state`, `remainingMs`; `cause`: the failure that opened it, when known); after `halfOpenAfterMs` it is half-open
 * and lets exactly `halfOpenMaxProbes` probes through at a time: a probe success closes it, a failure or a timed-out
 * probe reopens it. Outcomes are counted in the order they happened, synchronous ones included.
 *
 * Cancellations (the caller's signal aborting) and control signals are never counted, free any probe slot, and
 * are rethrown as they are (an abort as the signal's reason).
 *
 * @example
 *   const openai = circuitBreaker({ name: 'openai', strategy: consecutive({ threshold: 5 }), halfOpenAfterMs: 30_000 });
 *   openai.onBreak(({ error }) => log.warn('openai breaker opened', error));
 *   const response = await openai.execute(({ signal }) => client.chat(request, { signal }), callerSignal);
 */
export function circuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  return new CircuitBreakerPolicy(options);
}

class CircuitBreakerPolicy implements CircuitBreaker {
  readonly name: string;
  private readonly store: BreakerStore;
  private readonly clock: Clock;
  private readonly slowCallMs: number | undefined;
  private readonly isFailure: (error: unknown) => boolean;
  /** Bumped by `reset()`, so that handles from before it cannot release a later isolation. */
  private isolationEpoch = 0;
  private readonly stateChanges = new Emitter<BreakerTransition>();
  private readonly breaks = new Emitter<BreakerTransition>();
  private readonly resets = new Emitter<BreakerTransition>();
  private readonly halfOpens = new Emitter<BreakerTransition>();
  private readonly rejections = new Emitter<BreakerRejectedEvent>();
  readonly onStateChange = this.stateChanges.event;
  readonly onBreak = this.breaks.event;
  readonly onReset = this.resets.event;
  readonly onHalfOpen = this.halfOpens.event;
  readonly onRejected = this.rejections.event;

  constructor(options: CircuitBreakerOptions) {
    const settings = resolveBreakerOptions(options);
    this.name = settings.name;
    this.clock = settings.clock;
    this.slowCallMs = settings.slowCallMs;
    this.isFailure = settings.isFailure;
    this.store = settings.store({
      name: settings.name,
      rules: settings.rules,
      clock: settings.clock,
      initialState: settings.initialState,
      onTransition: (transition) => this.emitTransition(transition),
    });
  }

  get state(): BreakerState {
    return this.store.read().state;
  }

  async execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
    const context = toContext(signal);
    if (context.aborted) throw context.signal.reason;
    const admitted = this.store.admit();
    const admission = isPromiseLike(admitted) ? await admitted : admitted;
    if (admission.kind === 'rejected') throw this.reject(admission);
    const startedMs = this.slowCallMs === undefined ? 0 : this.clock.now();
    let value: T;
    try {
      const result = fn(context);
      // A synchronous result is recorded at once, as a synchronous throw is: outcomes are counted in the order they
      // happened, not a microtask apart.
      value = isPromiseLike(result) ? await result : result;
    } catch (error) {
      return this.fail(admission, error, context);
    }
    const outcome: BreakerOutcome =
      this.slowCallMs !== undefined && this.clock.now() - startedMs > this.slowCallMs ? 'failure' : 'success';
    const reported = this.store.report(admission, outcome);
    if (reported !== undefined) await reported;
    return value;
  }

  async isolate(): Promise<BreakerIsolation> {
    const epoch = this.isolationEpoch;
    const pending = this.store.isolate();
    if (pending !== undefined) await pending;
    let released = false;
    return {
      dispose: async () => {
        if (released || epoch !== this.isolationEpoch) return;
        released = true;
        await this.store.releaseIsolation();
      },
    };
  }

  async reset(): Promise<void> {
    this.isolationEpoch++;
    await this.store.reset();
  }

  toJSON(): BreakerSnapshot {
    return this.store.read();
  }

  private async fail(ticket: BreakerTicket, error: unknown, context: PolicyContext): Promise<never> {
    const cancelled = isControlSignal(error) || context.aborted;
    let outcome: BreakerOutcome = 'failure';
    try {
      // A throwing predicate is a bug to surface, but the probe slot must be freed first: hence `finally`.
      outcome = cancelled ? 'cancelled' : this.isFailure(error) ? 'failure' : 'ignored';
    } finally {
      await this.store.report(ticket, outcome, error);
    }
    // Whatever the function threw after the caller aborted, the caller's answer is the abort itself.
    throw cancelled && !isControlSignal(error) ? context.signal.reason : error;
  }

  private reject(rejection: BreakerRejection): KeelError {
    const { state, remainingMs, cause } = rejection;
    if (this.rejections.hasListeners) this.rejections.emit({ breaker: this.name, state, remainingMs });
    const message =
      state === 'isolated'
        ? `circuit breaker "${this.name}" is isolated: calls are rejected until it is released or reset`
        : state === 'half-open'
          ? `circuit breaker "${this.name}" is half-open and every probe slot is taken: calls are rejected for ` +
            `up to ${remainingMs} ms while the probes run`
          : `circuit breaker "${this.name}" is open: calls are rejected for another ${remainingMs} ms`;
    return rejectionError('policy.circuit_open', message, {
      retryAfterMs: remainingMs,
      data: { breaker: this.name, state, remainingMs: remainingMs ?? null },
      cause,
    });
  }

  private emitTransition(transition: BreakerTransition): void {
    if (this.stateChanges.hasListeners) this.stateChanges.emit(transition);
    const target =
      transition.to === 'closed' ? this.resets : transition.to === 'half-open' ? this.halfOpens : this.breaks;
    if (target.hasListeners) target.emit(transition);
  }
}
