import type { Clock } from '../clock.js';
import { type BreakerSnapshot, type BreakerState, parseBreakerSnapshot } from './snapshot.js';
import type { BreakerStrategy, BreakerWindow } from './strategy.js';

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
}

/** What a store answers when asked whether a call may run. */
export type BreakerTicket = ClosedTicket | ProbeTicket;
export type BreakerAdmission = BreakerTicket | BreakerRejection;

/** How long the breaker stays open: `initialMs` after the first open, times `factor` per open in a row, at most `maxMs`. */
export interface OpenDuration {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
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
  /** Validated snapshot to start from, or undefined for a new closed breaker. */
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

interface ProbeSlot {
  readonly id: number;
  readonly deadlineMs: number;
}

/**
 * The default store: state in this process, every operation synchronous. While closed, `admit` returns a cached
 * ticket and `report` touches only the strategy's window, so a successful call allocates nothing here.
 *
 * @example
 *   circuitBreaker({ store: inMemoryBreakerStore });
 */
export const inMemoryBreakerStore: BreakerStoreFactory = (options) => new InMemoryBreakerStore(options);

/** The in-memory {@link BreakerStore}; see {@link inMemoryBreakerStore}. */
export class InMemoryBreakerStore implements BreakerStore {
  private state: BreakerState = 'closed';
  private openUntilMs = 0;
  private consecutiveOpens = 0;
  private probeSuccesses = 0;
  private isolationHolds = 0;
  private probes: ProbeSlot[] = [];
  private nextProbeId = 1;
  /** Replaced whenever the breaker leaves closed or resets, so that reports from before are recognised as stale. */
  private closedTicket: ClosedTicket = { kind: 'closed' };
  private readonly window: BreakerWindow;
  private readonly rules: BreakerRules;
  private readonly clock: Clock;
  private readonly onTransition: (transition: BreakerTransition) => void;

  constructor(options: BreakerStoreOptions) {
    this.rules = options.rules;
    this.clock = options.clock;
    this.onTransition = options.onTransition;
    const saved = options.initialState === undefined ? undefined : parseBreakerSnapshot(options.initialState);
    const sameStrategy = saved !== undefined && saved.strategy === this.rules.strategy.kind;
    this.window = this.rules.strategy.createWindow(this.clock, sameStrategy ? saved.window : undefined);
    if (saved !== undefined) {
      this.state = saved.state;
      this.openUntilMs = saved.openUntilMs ?? 0;
      this.consecutiveOpens = saved.consecutiveOpens;
      this.probeSuccesses = saved.state === 'half-open' ? saved.probeSuccesses : 0;
    }
  }

  read(): BreakerSnapshot {
    this.applyDue(this.clock.now());
    return {
      version: 1,
      state: this.state,
      openUntilMs: this.state === 'open' ? this.openUntilMs : null,
      consecutiveOpens: this.consecutiveOpens,
      probeSuccesses: this.probeSuccesses,
      strategy: this.rules.strategy.kind,
      window: this.window.toJSON(),
    };
  }

  admit(): BreakerAdmission {
    return this.state === 'closed' ? this.closedTicket : this.admitWhileNotClosed();
  }

  report(ticket: BreakerTicket, outcome: BreakerOutcome, error?: unknown): void {
    if (ticket.kind === 'closed') {
      if (ticket !== this.closedTicket) return;
      if (outcome === 'success') this.window.success();
      else if (outcome === 'failure' && this.window.failure()) {
        this.open('failure-threshold', this.clock.now(), error);
      }
      return;
    }
    const nowMs = this.clock.now();
    // A probe past its deadline has already been counted as failed, whatever it reports now.
    this.applyDue(nowMs);
    const index = this.probes.findIndex((probe) => probe.id === ticket.probeId);
    if (index === -1) return;
    this.probes.splice(index, 1);
    if (outcome === 'success') {
      this.probeSuccesses++;
      if (this.probeSuccesses >= this.rules.probeSuccessesToClose) this.close('probe-succeeded', nowMs);
    } else if (outcome === 'failure') {
      this.open('probe-failed', nowMs, error);
    }
  }

  isolate(): void {
    this.isolationHolds++;
    if (this.state === 'isolated') return;
    const from = this.state;
    this.leave(from);
    this.state = 'isolated';
    this.onTransition({ from, to: 'isolated', reason: 'isolated', atMs: this.clock.now() });
  }

  releaseIsolation(): void {
    if (this.isolationHolds > 0) this.isolationHolds--;
    if (this.isolationHolds === 0 && this.state === 'isolated')
      this.close('isolation-released', this.clock.now());
  }

  reset(): void {
    this.isolationHolds = 0;
    if (this.state !== 'closed') {
      this.close('reset', this.clock.now());
      return;
    }
    this.window.reset();
    this.closedTicket = { kind: 'closed' };
  }

  private admitWhileNotClosed(): BreakerAdmission {
    const nowMs = this.clock.now();
    this.applyDue(nowMs);
    switch (this.state) {
      case 'closed':
        return this.closedTicket;
      case 'open':
        return { kind: 'rejected', state: 'open', remainingMs: this.openUntilMs - nowMs };
      case 'isolated':
        return { kind: 'rejected', state: 'isolated', remainingMs: undefined };
      case 'half-open': {
        if (this.probes.length < this.rules.halfOpenMaxProbes) {
          const probe = { id: this.nextProbeId++, deadlineMs: nowMs + this.rules.probeTimeoutMs };
          this.probes.push(probe);
          return { kind: 'probe', probeId: probe.id };
        }
        const deadlineMs = this.earliestProbe()!.deadlineMs;
        return { kind: 'rejected', state: 'half-open', remainingMs: deadlineMs - nowMs };
      }
    }
  }

  /** Applies every time-driven change due by `nowMs`, each at the moment it fell due. */
  private applyDue(nowMs: number): void {
    for (;;) {
      if (this.state === 'open' && nowMs >= this.openUntilMs) {
        this.state = 'half-open';
        this.probeSuccesses = 0;
        this.onTransition({ from: 'open', to: 'half-open', reason: 'open-elapsed', atMs: this.openUntilMs });
        continue;
      }
      const probe = this.state === 'half-open' ? this.earliestProbe() : undefined;
      if (probe !== undefined && nowMs >= probe.deadlineMs) {
        // The reopened period counts from the deadline, so it may itself have ended by now: hence the loop.
        this.open('probe-timed-out', probe.deadlineMs);
        continue;
      }
      return;
    }
  }

  private earliestProbe(): ProbeSlot | undefined {
    let earliest: ProbeSlot | undefined;
    for (const probe of this.probes)
      if (earliest === undefined || probe.deadlineMs < earliest.deadlineMs) earliest = probe;
    return earliest;
  }

  private open(reason: BreakerTransitionReason, atMs: number, error?: unknown): void {
    const from = this.state;
    this.leave(from);
    this.consecutiveOpens++;
    const { initialMs, factor, maxMs } = this.rules.openDuration;
    const openForMs = Math.min(maxMs, initialMs * factor ** (this.consecutiveOpens - 1));
    this.state = 'open';
    this.openUntilMs = atMs + openForMs;
    const transition: BreakerTransition =
      error === undefined
        ? { from, to: 'open', reason, atMs, openForMs }
        : { from, to: 'open', reason, atMs, openForMs, error };
    this.onTransition(transition);
  }

  private close(reason: BreakerTransitionReason, atMs: number): void {
    const from = this.state;
    this.leave(from);
    this.state = 'closed';
    this.consecutiveOpens = 0;
    this.isolationHolds = 0;
    this.onTransition({ from, to: 'closed', reason, atMs });
  }

  /** Clears what belongs to the state being left. */
  private leave(from: BreakerState): void {
    this.probes = [];
    this.probeSuccesses = 0;
    if (from === 'closed') this.closedTicket = { kind: 'closed' };
    // Outcomes counted before an open say nothing about the dependency once it closes again.
    this.window.reset();
  }
}
