import { deserializeError, type SerializedError, serializeError } from '../../errors/serialize.js';
import type { Clock } from '../clock.js';
import { isJsonObject } from '../validate.js';
import {
  type BreakerAdmission,
  type BreakerOutcome,
  type BreakerRejection,
  type BreakerRules,
  type BreakerStore,
  type BreakerStoreFactory,
  type BreakerStoreOptions,
  type BreakerTicket,
  type BreakerTransition,
  type BreakerTransitionReason,
  type ClosedTicket,
  openPeriodMs,
} from './breaker-store.js';
import { type BreakerSnapshot, type BreakerState, parseBreakerSnapshot } from './snapshot.js';
import type { BreakerWindow } from './strategy.js';

interface ProbeSlot {
  readonly id: number;
  readonly deadlineMs: number;
}

/**
 * The default store: state in this process, every operation synchronous. While closed, `admit` returns a cached
 * ticket and `report` touches only the strategy's window, so a successful call allocates nothing here.
 *
 * @example
 *   circuitBreaker({ store: memoryBreakerStore });
 */
export const memoryBreakerStore: BreakerStoreFactory = (options) => new MemoryBreakerStore(options);

/** The in-memory {@link BreakerStore}; see {@link memoryBreakerStore}. */
export class MemoryBreakerStore implements BreakerStore {
  private state: BreakerState = 'closed';
  private openUntilMs = 0;
  private consecutiveOpens = 0;
  private probeSuccesses = 0;
  private isolationHolds = 0;
  private probes: ProbeSlot[] = [];
  private nextProbeId = 1;
  /** The failure that last opened the breaker (see {@link BreakerRejection.cause}), and its JSON form once made. */
  private cause: unknown;
  private serializedCause: SerializedError | undefined;
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
    if (saved !== undefined) this.restore(saved);
  }

  /** Takes over a snapshot by the rules documented on {@link BreakerStore} ("Restoring a snapshot"). */
  private restore(saved: BreakerSnapshot): void {
    this.state = saved.state;
    this.openUntilMs = saved.openUntilMs ?? 0;
    this.consecutiveOpens = saved.consecutiveOpens;
    if (saved.state === 'half-open') {
      const nowMs = this.clock.now();
      // Without the field (an older snapshot) nobody knows: assume a probe was admitted just now.
      const probesUntilMs =
        saved.probesUntilMs === undefined ? nowMs + this.rules.probeTimeoutMs : saved.probesUntilMs;
      if (probesUntilMs !== null && probesUntilMs > nowMs) {
        // The snapshot's author may still be probing: no slot here before its probes are due.
        this.state = 'open';
        this.openUntilMs = probesUntilMs;
      } else {
        this.probeSuccesses = saved.probeSuccesses;
      }
    }
    if ((this.state === 'open' || this.state === 'half-open') && isJsonObject(saved.cause)) {
      this.serializedCause = saved.cause;
      this.cause = deserializeError(saved.cause);
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
      probesUntilMs:
        this.state === 'half-open' && this.probes.length > 0 ? this.latestProbe()!.deadlineMs : null,
      cause: this.state === 'open' || this.state === 'half-open' ? this.serializeCause() : null,
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
    // Isolation is a decision, not a failure: its refusals carry no cause.
    this.forgetCause();
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
        return { kind: 'rejected', state: 'open', remainingMs: this.openUntilMs - nowMs, cause: this.cause };
      case 'isolated':
        return { kind: 'rejected', state: 'isolated', remainingMs: undefined };
      case 'half-open': {
        if (this.probes.length < this.rules.halfOpenMaxProbes) {
          const probe = { id: this.nextProbeId++, deadlineMs: nowMs + this.rules.probeTimeoutMs };
          this.probes.push(probe);
          return { kind: 'probe', probeId: probe.id };
        }
        const deadlineMs = this.earliestProbe()!.deadlineMs;
        return { kind: 'rejected', state: 'half-open', remainingMs: deadlineMs - nowMs, cause: this.cause };
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

  private latestProbe(): ProbeSlot | undefined {
    let latest: ProbeSlot | undefined;
    for (const probe of this.probes)
      if (latest === undefined || probe.deadlineMs > latest.deadlineMs) latest = probe;
    return latest;
  }

  /** The cause in its JSON form, made once per open (snapshots may be taken often, opens are rare). */
  private serializeCause(): SerializedError | null {
    if (this.cause === undefined) return null;
    this.serializedCause ??= serializeError(this.cause);
    return this.serializedCause;
  }

  private open(reason: BreakerTransitionReason, atMs: number, error?: unknown): void {
    const from = this.state;
    this.leave(from);
    this.consecutiveOpens++;
    const openForMs = openPeriodMs(this.rules.openDuration, this.consecutiveOpens);
    this.state = 'open';
    this.openUntilMs = atMs + openForMs;
    // A probe that timed out brings no error of its own: the failure from before stays the best explanation.
    if (error !== undefined) {
      this.cause = error;
      this.serializedCause = undefined;
    }
    const transition: BreakerTransition =
      error === undefined
        ? { from, to: 'open', reason, atMs, openForMs }
        : { from, to: 'open', reason, atMs, openForMs, error };
    this.onTransition(transition);
  }

  private close(reason: BreakerTransitionReason, atMs: number): void {
    const from = this.state;
    this.leave(from);
    this.forgetCause();
    this.state = 'closed';
    this.consecutiveOpens = 0;
    this.isolationHolds = 0;
    this.onTransition({ from, to: 'closed', reason, atMs });
  }

  private forgetCause(): void {
    this.cause = undefined;
    this.serializedCause = undefined;
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
