import { type BreakerTransition, type Clock, type SerializedError, serializeError } from '@keel/core';
import { deserializeError, optionError, type TimerHandle } from '@keel/core/adapter';
import {
  type BreakerAdmission,
  type BreakerOutcome,
  type BreakerRejection,
  type BreakerRules,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerStore,
  type BreakerStoreFactory,
  type BreakerStoreOptions,
  type BreakerTicket,
  type ClosedTicket,
  MemoryBreakerStore,
  type ProbeTicket,
} from '@keel/core/store';
import type { Participant, SharedConnection, UnavailableRule } from '../shared-connection.js';
import { checkOptionsObject, requireChoice } from '../validation.js';
import { type BreakerUpdate, parseBreakerUpdate } from './breaker-update.js';

/** Options of `RedisState.breakerStore`. */
export interface RedisBreakerStoreOptions {
  /** What the breakers do while Redis cannot be reached (see `RedisStateOptions.onUnavailable`). Defaults to the state's. */
  onUnavailable?: UnavailableRule;
}

/** The strategies the breaker script runs: core's three, by their `kind`. */
const SCRIPTED_STRATEGIES = ['consecutive', 'count-window', 'time-window'];
const FACTORY = 'breakerStore';

/** Makes breaker stores over `connection`; see `RedisState.breakerStore`. */
export function redisBreakerStore(
  connection: SharedConnection,
  options: RedisBreakerStoreOptions = {},
): BreakerStoreFactory {
  checkOptionsObject(options, ['onUnavailable'], FACTORY, "{ onUnavailable: 'local' }");
  const rule = requireChoice(
    options.onUnavailable ?? connection.defaultRule,
    ['local', 'closed'],
    'onUnavailable',
    FACTORY,
  );
  return (storeOptions) => new RedisBreakerStore(connection, rule, storeOptions);
}

/** A closed ticket of the shared state, valid for one generation. */
interface SharedClosedTicket extends ClosedTicket {
  readonly gen: number;
}

/** A probe slot of the shared state. */
interface SharedProbeTicket extends ProbeTicket {
  readonly gen: number;
}

/** A ticket of the local store that stands in while Redis is unavailable. */
type LocalTicket = BreakerTicket & { readonly local: MemoryBreakerStore; readonly inner: BreakerTicket };

/**
 * A breaker store whose state lives in Redis, shared by every process, with a local copy kept current by the script's
 * answers and by the transitions other processes publish. Consistency: while the copy is known to be current (it has
 * been read from Redis and the subscription has been up since), a closed breaker admits calls from the copy, with no
 * round trip, and an open one rejects from it until its period ends; every outcome is reported to Redis (one EVALSHA);
 * half-open admissions always ask Redis, which hands out the fleet's probe slots atomically. A call admitted from the
 * copy between a transition elsewhere and the moment its message arrives runs under the old state, and its report is
 * ignored (its generation is stale): each process may send one call more after a breaker opens elsewhere.
 */
class RedisBreakerStore implements BreakerStore, Participant {
  private readonly key: string;
  private readonly rulesJson: string;
  private readonly rules: BreakerRules;
  private readonly name: string;
  private readonly clock: Clock;
  private readonly onTransition: (transition: BreakerTransition) => void;
  /** The snapshot to seed a missing shared state from, until the first answer from Redis. */
  private seedJson: string;
  // The local copy of the shared state; times in the scripts' clock.
  private gen = Number.NEGATIVE_INFINITY;
  private state: BreakerState = 'closed';
  private openUntilMs = 0;
  private consecutiveOpens = 0;
  private probeSuccesses = 0;
  private earliestProbeMs: number | undefined;
  private probesUntilMs: number | undefined;
  /** The failure that last opened the breaker: as the script holds it, parsed, and rebuilt (or this process's own). */
  private causeJson: string | undefined;
  private serializedCause: SerializedError | undefined;
  private cause: unknown;
  /** Redis refused a probe slot: reject locally until the earliest probe's deadline or news of a freed slot. */
  private probesTaken = false;
  /** The copy has been read from Redis since the subscription last came up: closed and open answer from it. */
  private current = false;
  /** The scripts' clock minus this process's clock (0 with `timeSource: 'clock'`). */
  private offsetMs = 0;
  private closedTicket: SharedClosedTicket = { kind: 'closed', gen: Number.NEGATIVE_INFINITY };
  /** The store that stands in while Redis is unavailable (rule `local`), from the copy as it was then. */
  private local: MemoryBreakerStore | undefined;
  /** Probe slots this process holds, with the timer that renews each while its probe runs. */
  private readonly renewals = new Map<number, TimerHandle>();

  constructor(
    private readonly connection: SharedConnection,
    private readonly rule: UnavailableRule,
    options: BreakerStoreOptions,
  ) {
    this.name = options.name;
    this.rules = options.rules;
    this.clock = options.clock;
    this.onTransition = options.onTransition;
    const { strategy, openDuration, probeTimeoutMs } = options.rules;
    if (!SCRIPTED_STRATEGIES.includes(strategy.kind)) {
      throw optionError({
        where: FACTORY,
        option: 'strategy',
        message:
          `the Redis breaker store runs the consecutive, countWindow and timeWindow strategies; "${strategy.kind}" ` +
          'has no Lua counterpart',
      });
    }
    if (connection.ttlMs < openDuration.maxMs + probeTimeoutMs) {
      throw optionError({
        where: FACTORY,
        option: 'ttlMs',
        message:
          `the state's ttlMs (${connection.ttlMs}) must outlast breaker "${this.name}"'s longest open period and ` +
          `probe (${openDuration.maxMs + probeTimeoutMs} ms), or an open breaker could expire into a closed one`,
      });
    }
    this.key = connection.key('breaker', this.name);
    this.rulesJson = JSON.stringify({
      strategy: { kind: strategy.kind, options: strategy.options },
      openDuration,
      halfOpenMaxProbes: options.rules.halfOpenMaxProbes,
      probeSuccessesToClose: options.rules.probeSuccessesToClose,
      probeTimeoutMs,
      probeSlotTtlMs: connection.probeSlotTtlMs,
    });
    this.seedJson = options.initialState === undefined ? '' : JSON.stringify(options.initialState);
    connection.subscribe(this.key, (message) => this.apply(parseBreakerUpdate(message), false));
    connection.join(this, this.key);
  }

  read(): BreakerSnapshot {
    if (this.local !== undefined) return this.local.read();
    const state = this.visibleState(this.serverNow());
    const exposed = state === 'open' || state === 'half-open';
    return {
      version: 1,
      state,
      openUntilMs: state === 'open' ? this.openUntilMs : null,
      consecutiveOpens: this.consecutiveOpens,
      probeSuccesses: state === 'half-open' ? this.probeSuccesses : 0,
      strategy: this.rules.strategy.kind,
      // The window lives in Redis only; a snapshot restores into a fresh one.
      window: null,
      probesUntilMs: state === 'half-open' ? (this.probesUntilMs ?? null) : null,
      cause: exposed ? (this.serializedCause ?? null) : null,
    };
  }

  admit(): BreakerAdmission | Promise<BreakerAdmission> {
    if (!this.connection.available) return this.admitUnavailable();
    if (this.current) {
      if (this.state === 'closed') return this.closedTicket;
      if (this.state === 'isolated') return { kind: 'rejected', state: 'isolated', remainingMs: undefined };
      const nowMs = this.serverNow();
      if (this.state === 'open' && this.openUntilMs > nowMs)
        return this.rejection('open', this.openUntilMs - nowMs);
      if (
        this.state === 'half-open' &&
        this.probesTaken &&
        this.earliestProbeMs !== undefined &&
        this.earliestProbeMs > nowMs
      ) {
        return this.rejection('half-open', this.earliestProbeMs - nowMs);
      }
    }
    return this.admitShared();
  }

  report(ticket: BreakerTicket, outcome: BreakerOutcome, error?: unknown): void | Promise<void> {
    if (!('gen' in ticket)) {
      const { local, inner } = ticket as LocalTicket;
      // A ticket of a local store that has since given way to the shared state counts no more.
      if (local === this.local) local.report(inner, outcome, error);
      return;
    }
    // Unreachable: the outcome is lost; a probe slot it held frees itself at its deadline.
    if (!this.connection.available) return;
    if (ticket.kind === 'closed') {
      const { gen } = ticket as SharedClosedTicket;
      if (outcome === 'ignored' || outcome === 'cancelled' || gen !== this.gen) return;
      return this.reportShared('closed', gen, '', outcome, error);
    }
    const { gen, probeId } = ticket as SharedProbeTicket;
    this.stopRenewing(probeId);
    return this.reportShared('probe', gen, String(probeId), outcome, error);
  }

  isolate(): Promise<void> {
    return this.command('isolate');
  }

  releaseIsolation(): Promise<void> {
    return this.command('release');
  }

  reset(): Promise<void> {
    return this.command('reset');
  }

  async prepareResync(): Promise<() => void> {
    const genBefore = this.gen;
    const update = parseBreakerUpdate(await this.call('sync', []));
    return () => {
      // The first read of the shared state is a restore, not a move; after an outage, what this process showed meanwhile
      // (its stand-in's state, or its copy's) is what the fleet's state is compared with.
      const before =
        this.local !== undefined
          ? this.local.read().state
          : this.gen === Number.NEGATIVE_INFINITY
            ? undefined
            : this.visibleState(this.serverNow());
      this.local = undefined;
      // Redis holds the truth, even a state older than the copy (a server restored from an older backup), unless
      // messages published after this read have brought the copy further already.
      const newerSinceRead = this.gen > genBefore && this.gen > update.gen;
      if (!newerSinceRead) this.gen = Number.NEGATIVE_INFINITY;
      this.apply({ ...update, transitions: [] }, true);
      this.current = true;
      const after = this.visibleState(this.serverNow());
      if (before === undefined || before === after) return;
      // What happened elsewhere while this process could not see is not known move by move: one move says so.
      const transition: BreakerTransition =
        after === 'open'
          ? {
              from: before,
              to: after,
              reason: 'synchronized',
              atMs: update.now,
              openForMs: Math.max(0, this.openUntilMs - update.now),
              ...(this.cause === undefined ? {} : { error: this.cause }),
            }
          : { from: before, to: after, reason: 'synchronized', atMs: update.now };
      this.onTransition(transition);
    };
  }

  private async admitShared(): Promise<BreakerAdmission> {
    let update: BreakerUpdate;
    try {
      update = parseBreakerUpdate(await this.call('admit', [], (late) => this.lateAdmission(late)));
    } catch {
      // Redis is down: the rule. Only slow (it still counts as available): this call is decided from the copy.
      return this.connection.available ? this.admitFromCopy() : this.admitUnavailable();
    }
    this.apply(update, true);
    const { ticket, rejection } = update;
    if (ticket?.kind === 'closed') return this.closedTicket;
    if (ticket?.kind === 'probe') {
      this.renew(ticket.probeId, update.gen);
      return { kind: 'probe', probeId: ticket.probeId, gen: update.gen } as SharedProbeTicket;
    }
    if (rejection?.state === 'half-open') this.probesTaken = true;
    if (rejection?.state === 'isolated')
      return { kind: 'rejected', state: 'isolated', remainingMs: undefined };
    return this.rejection(rejection?.state ?? 'open', rejection?.remainingMs ?? 0);
  }

  /**
   * Decides a call whose admission Redis did not answer in time, though Redis is not unavailable: closed admits,
   * open and isolated reject as the copy says, and half-open refuses (the slot, if Redis gave one, is given back when
   * the late answer comes, see `lateAdmission`).
   */
  private admitFromCopy(): BreakerAdmission {
    const nowMs = this.serverNow();
    const state = this.visibleState(nowMs);
    if (state === 'closed') return this.closedTicket;
    if (state === 'isolated') return { kind: 'rejected', state: 'isolated', remainingMs: undefined };
    if (state === 'open') return this.rejection('open', this.openUntilMs - nowMs);
    return this.rejection('half-open', (this.earliestProbeMs ?? nowMs) - nowMs);
  }

  /** The answer to an admission that timed out here: a probe slot nobody will use is given back at once. */
  private lateAdmission(answer: unknown): void {
    let update: BreakerUpdate;
    try {
      update = parseBreakerUpdate(answer as string);
    } catch {
      return;
    }
    this.apply(update, true);
    if (update.ticket?.kind === 'probe' && this.connection.available) {
      void this.reportShared('probe', update.gen, String(update.ticket.probeId), 'cancelled', undefined);
    }
  }

  /**
   * Keeps a probe slot this process holds while its probe runs: Redis frees a slot whose lease (`probeSlotTtlMs`)
   * lapses, so a slot whose admission's answer was lost (or whose holder died) is taken again soon, not at the
   * probe's deadline. Renewed every third of the lease, so one slow or lost renewal does not lose the slot.
   */
  private renew(probeId: number, gen: number): void {
    const everyMs = Math.max(1, Math.floor(this.connection.probeSlotTtlMs / 3));
    const schedule = () => {
      const timer = this.clock.setTimeout(() => {
        if (!this.renewals.has(probeId)) return;
        schedule();
        if (!this.connection.available) return;
        this.call('renew', ['probe', String(gen), String(probeId), '', '']).then(
          (answer) => {
            const update = parseBreakerUpdate(answer);
            this.apply(update, true);
            // The slot is gone (the probe timed out, the breaker moved on): nothing left to keep.
            if (update.renewed !== true) this.stopRenewing(probeId);
          },
          () => undefined,
        );
      }, everyMs);
      (timer as { unref?: () => void } | undefined)?.unref?.();
      this.renewals.set(probeId, timer);
    };
    schedule();
  }

  private stopRenewing(probeId: number): void {
    const timer = this.renewals.get(probeId);
    if (timer === undefined) return;
    this.clock.clearTimeout(timer);
    this.renewals.delete(probeId);
  }

  private async reportShared(
    kind: 'closed' | 'probe',
    gen: number,
    probeId: string,
    outcome: BreakerOutcome,
    error: unknown,
  ): Promise<void> {
    const cause = outcome === 'failure' && error !== undefined ? JSON.stringify(serializeError(error)) : '';
    try {
      const update = parseBreakerUpdate(
        await this.call('report', [kind, String(gen), probeId, outcome, cause]),
      );
      this.apply(update, true, error);
    } catch {
      // Redis is unavailable now (the state says so and policies follow the rule): the outcome is lost.
    }
  }

  private async command(operation: 'isolate' | 'release' | 'reset'): Promise<void> {
    // An operator's decision must reach the fleet: when it cannot, the caller hears so.
    if (!this.connection.available) throw this.connection.unavailableError();
    this.apply(parseBreakerUpdate(await this.call(operation, [])), true);
  }

  private async call(
    operation: string,
    args: readonly string[],
    late?: (answer: unknown) => void,
  ): Promise<string> {
    const nowArgument = this.connection.timeSource === 'clock' ? String(this.clock.now()) : '';
    const answer = (await this.connection.run(
      'breaker',
      this.key,
      [
        operation,
        nowArgument,
        this.rulesJson,
        String(this.connection.ttlMs),
        this.seedJson,
        Number.isFinite(this.gen) ? String(this.gen) : '',
        ...args,
      ],
      late,
    )) as string;
    // The shared state exists now: the snapshot must not come back should the key expire one day.
    this.seedJson = '';
    return answer;
  }

  /**
   * Takes an answer or a message into the copy, unless it is older than what the copy holds, and reports each
   * transition the copy had not seen yet. `error`: what this process's own report threw, for the transition it caused.
   */
  private apply(update: BreakerUpdate, answer: boolean, error?: unknown): void {
    if (answer) this.offsetMs = this.timeOffset(update);
    if (update.gen < this.gen) return;
    const seenGen = this.gen;
    if (update.gen > seenGen) {
      this.gen = update.gen;
      this.closedTicket = { kind: 'closed', gen: update.gen };
      this.probesTaken = false;
    }
    if (update.freed === true) this.probesTaken = false;
    this.state = update.state;
    this.openUntilMs = update.openUntil;
    this.consecutiveOpens = update.opens;
    this.probeSuccesses = update.probeSuccesses;
    this.earliestProbeMs = update.earliestProbe;
    this.probesUntilMs = update.probesUntil;
    if (update.state !== 'open' && update.state !== 'half-open') {
      this.causeJson = undefined;
      this.serializedCause = undefined;
      this.cause = undefined;
    } else if (update.cause !== undefined && update.cause !== this.causeJson) {
      // Only a report's own answer carries a cause it did not have before: the failure this process just reported.
      this.causeJson = update.cause;
      this.serializedCause = JSON.parse(update.cause) as SerializedError;
      this.cause = error ?? deserializeError(this.serializedCause);
    }
    for (const move of update.transitions ?? []) {
      if (move.gen <= seenGen) continue;
      const opened =
        move.to === 'open' && (move.reason === 'failure-threshold' || move.reason === 'probe-failed');
      const transition: BreakerTransition =
        move.to === 'open'
          ? {
              from: move.from,
              to: move.to,
              reason: move.reason,
              atMs: move.atMs,
              openForMs: move.openForMs ?? 0,
              ...(opened && this.cause !== undefined ? { error: this.cause } : {}),
            }
          : { from: move.from, to: move.to, reason: move.reason, atMs: move.atMs };
      this.onTransition(transition);
    }
  }

  private admitUnavailable(): BreakerAdmission {
    if (this.rule === 'closed') {
      return {
        kind: 'rejected',
        state: 'open',
        remainingMs: this.connection.recoveryIntervalMs,
        cause: this.connection.unavailableError(),
      };
    }
    this.local ??= this.standIn();
    const local = this.local;
    const admission = local.admit();
    if (admission.kind === 'rejected') return admission;
    return { ...admission, local, inner: admission } as LocalTicket;
  }

  /**
   * A local store from the copy as it stands, by core's restore rules: open stays open until its period ends (in this
   * process's clock), and a half-open breaker restores as open while probes of other processes may run.
   */
  private standIn(): MemoryBreakerStore {
    const state = this.visibleState(this.serverNow());
    const initialState: BreakerSnapshot = {
      version: 1,
      state,
      openUntilMs: state === 'open' ? this.openUntilMs - this.offsetMs : null,
      consecutiveOpens: this.consecutiveOpens,
      probeSuccesses: 0,
      strategy: this.rules.strategy.kind,
      window: null,
      cause: state === 'open' || state === 'half-open' ? (this.serializedCause ?? null) : null,
    };
    return new MemoryBreakerStore({
      name: this.name,
      rules: this.rules,
      clock: this.clock,
      initialState,
      onTransition: this.onTransition,
    });
  }

  private rejection(state: 'open' | 'half-open', remainingMs: number): BreakerRejection {
    return { kind: 'rejected', state, remainingMs: Math.max(0, remainingMs), cause: this.cause };
  }

  /** The state as a reader sees it: an open breaker whose period has ended is half-open already. */
  private visibleState(nowMs: number): BreakerState {
    return this.state === 'open' && nowMs >= this.openUntilMs ? 'half-open' : this.state;
  }

  private serverNow(): number {
    return this.clock.now() + this.offsetMs;
  }

  private timeOffset(update: BreakerUpdate): number {
    return this.connection.timeSource === 'clock' ? 0 : update.now - this.clock.now();
  }
}
