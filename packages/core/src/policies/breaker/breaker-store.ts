import type { Clock } from '../clock.js';
import type { BreakerSnapshot, BreakerState } from './snapshot.js';
import type { BreakerStrategy } from './strategy.js';

/** A value, or a promise of one: the in-memory store answers at once, a shared store may not. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * How an admitted call ended, as the breaker reports it. `ignored`: an error the breaker does not count (the
 * caller's fault). `cancelled`: the caller cancelled, or a control signal passed through. Neither counts; both free
 * a probe slot.
 */
export type BreakerOutcome = 'success' | 'failure' | 'ignored' | 'cancelled';

/** Why a breaker changed state. */
export type BreakerTransitionReason =
  /** The strategy saw enough failures: closed to open. */
  | 'failure-threshold'
  /** The open period ended: open to half-open. */
  | 'open-elapsed'
  /** Enough probes succeeded: half-open to closed. */
  | 'probe-succeeded'
  /** A probe failed: half-open to open. */
  | 'probe-failed'
  /** A probe did not report back within `probeTimeoutMs`: half-open to open. */
  | 'probe-timed-out'
  /** `isolate()` was called: any state to isolated. */
  | 'isolated'
  /** The last isolation handle was disposed: isolated to closed. */
  | 'isolation-released'
  /** `reset()` was called: any state to closed. */
  | 'reset';

/** One change of state. */
export interface BreakerTransition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly reason: BreakerTransitionReason;
  /**
   * When the change took effect, in epoch milliseconds. Time-driven changes are applied when the store is next
   * used, so this may be earlier than the moment the event is emitted.
   */
  readonly atMs: number;
  /** How long the breaker stays open, when `to` is `open`. */
  readonly openForMs?: number;
  /** The counted error that opened the breaker, when `reason` is `failure-threshold` or `probe-failed`. */
  readonly error?: unknown;
}

/** Admission of a call while closed. Stores may add fields; the breaker hands the same object back to `report`. */
export interface ClosedTicket {
  readonly kind: 'closed';
}

/** Admission of a call as one of the half-open breaker's probes. */
export interface ProbeTicket {
  readonly kind: 'probe';
  readonly probeId: number;
}

/** A refused call. `remainingMs`: until the open period ends (open), until the earliest probe deadline (half-open). */
export interface BreakerRejection {
  readonly kind: 'rejected';
  readonly state: Exclude<BreakerState, 'closed'>;
  /** Undefined when isolated: nobody knows when it will be released. */
  readonly remainingMs: number | undefined;
  /**
   * Open or half-open: the counted failure that last opened the breaker (a probe that timed out keeps the one before
   * it); after a restore, the snapshot's `cause` rebuilt with `deserializeError`. Undefined when isolated or unknown.
   * The breaker hands it to `policy.circuit_open` as its `cause`.
   */
  readonly cause?: unknown;
}

/** An admitted call's ticket, handed back to {@link BreakerStore.report} when the call ends. */
export type BreakerTicket = ClosedTicket | ProbeTicket;

/** What a store answers when asked whether a call may run: a ticket, or a rejection. */
export type BreakerAdmission = BreakerTicket | BreakerRejection;

/** How long the breaker stays open: `initialMs` after the first open, times `factor` per open in a row, at most `maxMs`. */
export interface OpenDuration {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
}

/**
 * The open period after `consecutiveOpens` opens in a row (1 for the first): `initialMs × factor^(opens - 1)`, at
 * most `maxMs`. Always a finite number, however many opens: the power is never computed past the cap, and a period
 * that starts at 0 stays 0 (0 × Infinity would be NaN, and a NaN deadline never passes).
 */
export function openPeriodMs(duration: OpenDuration, consecutiveOpens: number): number {
  const { initialMs, factor, maxMs } = duration;
  if (initialMs === 0 || factor === 1 || initialMs >= maxMs) return Math.min(initialMs, maxMs);
  const exponent = Math.max(0, consecutiveOpens - 1);
  // The exponent at which the period reaches the cap; beyond it no power is computed at all.
  if (exponent >= Math.log(maxMs / initialMs) / Math.log(factor)) return maxMs;
  return Math.min(maxMs, initialMs * factor ** exponent);
}

/** The state machine's parameters, validated by `circuitBreaker`. */
export interface BreakerRules {
  readonly strategy: BreakerStrategy;
  readonly openDuration: OpenDuration;
  readonly halfOpenMaxProbes: number;
  readonly probeSuccessesToClose: number;
  readonly probeTimeoutMs: number;
}

/** What a store factory receives from the breaker it serves. */
export interface BreakerStoreOptions {
  readonly rules: BreakerRules;
  readonly clock: Clock;
  /**
   * Validated snapshot to start from, or undefined for a new closed breaker. See "Restoring a snapshot" on
   * {@link BreakerStore} for what a store must make of it.
   */
  readonly initialState: BreakerSnapshot | undefined;
  /** Called after every change of state (a shared store may also call it for changes made by other processes). */
  readonly onTransition: (transition: BreakerTransition) => void;
}

/** Makes the store of one breaker. */
export type BreakerStoreFactory = (options: BreakerStoreOptions) => BreakerStore;

/**
 * Where a breaker's state lives and the state machine runs. Each operation is atomic: a shared store (Redis, say)
 * implements `admit` and `report` as single server-side steps, so that two processes never both take the last probe
 * slot. Operations may return promises; the in-memory store never does, so the closed path costs no microtask.
 *
 * Time-driven changes (open to half-open, a probe's deadline passing) are applied lazily by whichever operation
 * next looks at the state, at the time they fell due: no timers are needed.
 *
 * Restoring a snapshot (`initialState`, from `toJSON()` in another process or before a restart). The rule is that a
 * snapshot never hands out a probe slot its author may still be using. With `nowMs` the time of the restore:
 *
 * - `closed`: closed, with the snapshot's window when the strategy has the same `kind` (a fresh one otherwise).
 * - `open`: open until `openUntilMs` (half-open at once if that has passed).
 * - `half-open` with `probesUntilMs` after `nowMs`: probes the snapshotting process admitted may still be running, and
 *   their outcome will never reach this store. It is restored as `open` until `probesUntilMs`, quietly (no
 *   transition event), then goes half-open as usual (`open-elapsed`, dated `probesUntilMs`) with every slot free.
 *   `consecutiveOpens` is kept, so the next open period is the one the snapshot's author would have used; the
 *   snapshot's `probeSuccesses` are dropped (those probes are not this store's to count).
 * - `half-open` with `probesUntilMs` absent (a snapshot from a keel version before the field): as above, with
 *   `probesUntilMs` = `nowMs + probeTimeoutMs`, as if a probe had just been admitted.
 * - `half-open` with `probesUntilMs` null or not after `nowMs`: half-open, every slot free, `probeSuccesses` kept.
 * - `isolated`: isolated until `reset()`, or until an isolation taken after the restore is released (the
 *   snapshot's own holds belong to its author).
 * - `cause` (open or half-open): rebuilt with `deserializeError` and handed out as {@link BreakerRejection.cause}.
 *
 * A shared store that already holds state for the breaker keeps it and ignores `initialState` (the snapshot can
 * only be older); it seeds a missing state from the snapshot by the rules above, with the restored `open` period as
 * its own open period. `read()` must report `probesUntilMs` (the latest deadline of the probes it knows to be
 * running, null when none) and `cause`, so that its snapshots restore by the same rules.
 */
export interface BreakerStore {
  /**
   * The state now, applying changes that have fallen due. Synchronous: a shared store answers from its local copy
   * of the last state it saw.
   */
  read(): BreakerSnapshot;
  /**
   * Whether a call may run. Closed: a ticket (ideally the same object every time, to spare the allocation).
   * Open past its period: moves to half-open. Half-open: takes a probe slot if one is free, atomically.
   */
  admit(): MaybePromise<BreakerAdmission>;
  /**
   * Records how an admitted call ended. A ticket from an earlier state (the breaker opened, or the probe timed out,
   * since it was issued) is ignored. `error` is what the call threw, for the transition event.
   */
  report(ticket: BreakerTicket, outcome: BreakerOutcome, error?: unknown): MaybePromise<void>;
  /** Takes one isolation hold: the breaker is isolated while any hold remains. */
  isolate(): MaybePromise<void>;
  /** Releases one isolation hold; the last one closes the breaker. */
  releaseIsolation(): MaybePromise<void>;
  /** Closes the breaker, drops every isolation hold, forgets every counted outcome. */
  reset(): MaybePromise<void>;
}
