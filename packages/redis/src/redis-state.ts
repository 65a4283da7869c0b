import { type Clock, KeelError } from '@keel/core';
import { Emitter, type Event, type TimerHandle } from '@keel/core/adapter';
import type {
  BreakerStoreFactory,
  BudgetStore,
  PaceStore,
  RateLimiterStoreFactory,
  RetryBudgetStoreFactory,
} from '@keel/core/store';
import { Redis, type RedisOptions } from 'ioredis';
import { BREAKER_SCRIPT } from './breaker/breaker-script.js';
import { type RedisBreakerStoreOptions, redisBreakerStore } from './breaker/redis-breaker-store.js';
import { BUDGET_SCRIPT } from './budget/budget-script.js';
import { RedisBudgetStore } from './budget/redis-budget-store.js';
import { PACE_SCRIPT } from './pace/pace-script.js';
import { RedisPaceStore } from './pace/redis-pace-store.js';
import { RATE_LIMITER_SCRIPT } from './rate-limiter/rate-limiter-script.js';
import {
  type RedisRateLimiterStoreOptions,
  redisRateLimiterStore,
} from './rate-limiter/redis-rate-limiter-store.js';
import type { RedisRecoveredEvent, RedisStatus, RedisUnavailableEvent } from './redis-events.js';
import {
  type RedisStateOptions,
  type RedisStateSettings,
  resolveStateOptions,
} from './redis-state-options.js';
import {
  type RedisRetryBudgetStoreOptions,
  redisRetryBudgetStore,
} from './retry-budget/redis-retry-budget-store.js';
import { RETRY_BUDGET_SCRIPT } from './retry-budget/retry-budget-script.js';
import type {
  Participant,
  ScriptName,
  SharedConnection,
  StateKind,
  UnavailableRule,
} from './shared-connection.js';

/** Policy state shared by a fleet through one Redis: the stores to give keel's policies, and the connection's health. */
export interface RedisState {
  readonly namespace: string;
  /** `connecting` until the first connection, then `available` or `unavailable`; `closed` after `close()`. */
  readonly status: RedisStatus;
  /**
   * Resolves once Redis answers and every store made so far has its shared state; rejects with `store.unavailable`
   * after `connectTimeoutMs`. Policies work before (by their `onUnavailable` rule), so awaiting it is optional.
   */
  ready(): Promise<void>;
  /**
   * A breaker store factory: `circuitBreaker({ name: 'openai', store: shared.breakerStore() })`, or the agent's
   * `breaker: { store: shared.breakerStore() }` (one shared state per breaker name).
   */
  breakerStore(options?: RedisBreakerStoreOptions): BreakerStoreFactory;
  /** A rate limiter store factory: `rateLimiter({ ratePerSecond: 50, store: shared.rateLimiterStore({ name }) })`. */
  rateLimiterStore(options: RedisRateLimiterStoreOptions): RateLimiterStoreFactory;
  /** A retry budget store factory: `retryBudget({ ratio: 0.2, store: shared.retryBudgetStore({ name }) })`. */
  retryBudgetStore(options: RedisRetryBudgetStoreOptions): RetryBudgetStoreFactory;
  /**
   * A store for the agent's token and cost budgets, shared by the fleet: `agent({ budgets: { limits, store:
   * shared.budgetStore() } })`. Reserve and settle are one round trip each, atomic over a call's counters; while Redis
   * cannot be reached they reject with `store.unavailable`, and the agent's `budgets.onStoreUnavailable` decides
   * (`closed` by default: no call is sent).
   */
  budgetStore(): BudgetStore;
  /**
   * A store for the agent's pace governor, shared by the fleet: `agent({ model, pace: { store: shared.paceStore() } })`.
   * Every process paces its calls against one window per provider/model/key, by what the answers of all of them said;
   * waiting calls go by run priority, then in turns between tenants (see `PaceStore`). Each operation is one round
   * trip. While Redis cannot be reached the agent paces each call with its own local governor (a
   * `pace-store-unavailable` run event) and goes back to the shared window once Redis answers.
   */
  paceStore(): PaceStore;
  /** Redis stopped answering: policies follow their `onUnavailable` rule from now on. */
  readonly onUnavailable: Event<RedisUnavailableEvent>;
  /** Redis answers again and the policies have taken the shared state back. */
  readonly onRecovered: Event<RedisRecoveredEvent>;
  /** Closes both connections. Policies made from this state then follow their `onUnavailable` rule, silently. */
  close(): Promise<void>;
}

/**
 * Connects to Redis (two connections: commands and pub/sub) and makes stores whose state every process of a fleet
 * shares: circuit breakers (one half-open probe per fleet), rate limiters (one bucket per fleet) and retry budgets.
 * Each operation has a timeout (`operationTimeoutMs`: that call is decided without Redis); when Redis cannot be
 * reached (a closed connection, a failed command, or no answer to a PING within `unavailableAfterMs`) the policies
 * degrade by the `onUnavailable` rule, `onUnavailable` fires, and the shared state is taken back when Redis returns
 * (`onRecovered`).
 *
 * @example
 *   const shared = redisState({ url: 'redis://127.0.0.1:6379', namespace: 'prod' });
 *   shared.onUnavailable(({ error }) => log.warn('shared policy state unavailable', error));
 *   await shared.ready();
 *   const assistant = agent({ model, breaker: { store: shared.breakerStore() }, retry: {
 *     budget: retryBudget({ ratio: 0.2, store: shared.retryBudgetStore({ name: 'models' }) }) } });
 */
export function redisState(options: RedisStateOptions): RedisState {
  return new SharedRedisState(resolveStateOptions(options));
}

const COMMANDS: Record<ScriptName, { command: string; lua: string; numberOfKeys?: number }> = {
  breaker: { command: 'keelBreaker', lua: BREAKER_SCRIPT, numberOfKeys: 1 },
  rateLimiter: { command: 'keelRateLimiter', lua: RATE_LIMITER_SCRIPT, numberOfKeys: 1 },
  retryBudget: { command: 'keelRetryBudget', lua: RETRY_BUDGET_SCRIPT, numberOfKeys: 1 },
  // Over several keys (a call's counters; a pace window's three): called with the number of keys first.
  budget: { command: 'keelBudget', lua: BUDGET_SCRIPT },
  pace: { command: 'keelPace', lua: PACE_SCRIPT },
};

type ScriptCommand = (key: string, ...args: string[]) => Promise<unknown>;

class SharedRedisState implements RedisState, SharedConnection {
  readonly namespace: string;
  readonly ttlMs: number;
  readonly recoveryIntervalMs: number;
  readonly probeSlotTtlMs: number;
  readonly onUnavailable: Event<RedisUnavailableEvent>;
  readonly onRecovered: Event<RedisRecoveredEvent>;
  readonly timeSource: 'redis' | 'clock';
  readonly clock: Clock;
  readonly defaultRule: UnavailableRule;
  private readonly connectTimeoutMs: number;
  private readonly operationTimeoutMs: number;
  private readonly unavailableAfterMs: number;
  /** An operation timed out and a PING checks whether Redis is slow or gone. */
  private checkingHealth = false;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly where: string;
  private readonly unavailableEvents = new Emitter<RedisUnavailableEvent>();
  private readonly recoveredEvents = new Emitter<RedisRecoveredEvent>();
  private readonly channels = new Map<string, Set<(message: string) => void>>();
  private readonly participants = new Map<Participant, string | undefined>();
  private readonly readyWaiters = new Set<() => void>();
  private currentStatus: RedisStatus = 'connecting';
  /** Grows with every failure, so that a resynchronisation that overlapped one is not taken for a success. */
  private failures = 0;
  private lastError: unknown;
  private unavailableSinceMs = 0;
  private outageError: KeelError | undefined;
  private recovering = false;
  private recoveryTimer: TimerHandle | undefined;

  constructor(settings: RedisStateSettings) {
    this.namespace = settings.namespace;
    this.ttlMs = settings.ttlMs;
    this.recoveryIntervalMs = settings.recoveryIntervalMs;
    this.probeSlotTtlMs = settings.probeSlotTtlMs;
    this.timeSource = settings.timeSource;
    this.clock = settings.clock;
    this.defaultRule = settings.onUnavailable;
    this.connectTimeoutMs = settings.connectTimeoutMs;
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.unavailableAfterMs = settings.unavailableAfterMs;
    this.onUnavailable = this.unavailableEvents.event;
    this.onRecovered = this.recoveredEvents.event;
    const connection: RedisOptions = {
      // Never queue or resend: an operation either runs now or counts as Redis being unavailable, so that a late
      // write (a report, a token) never lands after the policy has moved on.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      // Only a backstop, so that no command waits forever: operations and health checks time themselves (run).
      commandTimeout: settings.unavailableAfterMs + settings.operationTimeoutMs,
      connectTimeout: Math.max(settings.operationTimeoutMs, 1_000),
      retryStrategy: (attempts) => Math.min(50 * attempts, settings.recoveryIntervalMs),
    };
    this.commands =
      settings.client !== undefined
        ? settings.client.duplicate(connection)
        : new Redis(settings.url as string, connection);
    this.subscriber = this.commands.duplicate();
    this.where = `${this.commands.options.host ?? '127.0.0.1'}:${this.commands.options.port ?? 6379}`;
    for (const { command, lua, numberOfKeys } of Object.values(COMMANDS)) {
      this.commands.defineCommand(command, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
    }
    for (const redis of [this.commands, this.subscriber]) {
      redis.on('error', (error: unknown) => {
        this.lastError = error;
      });
      redis.on('close', () => this.fail(this.lastError ?? new Error('the connection to Redis closed')));
      redis.on('ready', () => void this.recover());
    }
    this.subscriber.on('message', (channel: string, message: string) => {
      for (const listener of this.channels.get(channel) ?? []) {
        try {
          listener(message);
        } catch (error) {
          // Anyone may publish on a channel: a message that is not a breaker's must not break the connection.
          process.emitWarning(
            `keel: a message on Redis channel ${channel} could not be applied: ${String(error)}`,
          );
        }
      }
    });
  }

  get status(): RedisStatus {
    return this.currentStatus;
  }

  get available(): boolean {
    return this.currentStatus === 'available';
  }

  ready(): Promise<void> {
    if (this.currentStatus === 'available') return Promise.resolve();
    if (this.currentStatus === 'closed') return Promise.reject(this.unavailableError());
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.clock.clearTimeout(timer);
        this.readyWaiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimeout(() => {
        this.readyWaiters.delete(done);
        reject(
          new KeelError(
            'store.unavailable',
            `Redis at ${this.where} did not answer within ${this.connectTimeoutMs} ms (connectTimeoutMs)`,
            { cause: this.lastError, data: { namespace: this.namespace } },
          ),
        );
      }, this.connectTimeoutMs);
      this.readyWaiters.add(done);
    });
  }

  breakerStore(options?: RedisBreakerStoreOptions): BreakerStoreFactory {
    return redisBreakerStore(this, options);
  }

  rateLimiterStore(options: RedisRateLimiterStoreOptions): RateLimiterStoreFactory {
    return redisRateLimiterStore(this, options);
  }

  retryBudgetStore(options: RedisRetryBudgetStoreOptions): RetryBudgetStoreFactory {
    return redisRetryBudgetStore(this, options);
  }

  budgetStore(): BudgetStore {
    return new RedisBudgetStore(this);
  }

  paceStore(): PaceStore {
    return new RedisPaceStore(this);
  }

  key(kind: StateKind, name: string): string {
    return `keel:${this.namespace}:${kind}:${name}`;
  }

  async run(
    script: ScriptName,
    key: string,
    args: readonly string[],
    late?: (answer: unknown) => void,
  ): Promise<unknown> {
    const command = (this.commands as unknown as Record<string, ScriptCommand>)[COMMANDS[script].command]!;
    return this.answerOf(command.call(this.commands, key, ...args), late);
  }

  async runKeys(script: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const command = (this.commands as unknown as Record<string, ScriptCommand>)[COMMANDS[script].command]!;
    return this.answerOf(command.call(this.commands, String(keys.length), ...keys, ...args));
  }

  /** An operation's answer, or `store.unavailable`: see `SharedConnection.run`. */
  private async answerOf(pending: Promise<unknown>, late?: (answer: unknown) => void): Promise<unknown> {
    try {
      return await within(pending, this.operationTimeoutMs);
    } catch (error) {
      if (error !== TIMED_OUT) {
        this.fail(error);
        throw this.unavailableError();
      }
      pending.then(
        (answer) => late?.(answer),
        () => undefined,
      );
      this.checkHealth();
      throw new KeelError(
        'store.unavailable',
        `Redis at ${this.where} did not answer within ${this.operationTimeoutMs} ms (operationTimeoutMs)`,
        { data: { namespace: this.namespace } },
      );
    }
  }

  subscribe(channel: string, listener: (message: string) => void): void {
    let listeners = this.channels.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.channels.set(channel, listeners);
    }
    listeners.add(listener);
  }

  join(participant: Participant, channel?: string): void {
    this.participants.set(participant, channel);
    if (this.currentStatus === 'available') this.resyncOne(participant, channel);
  }

  unavailableError(): KeelError {
    this.outageError ??= new KeelError(
      'store.unavailable',
      this.currentStatus === 'closed'
        ? `the Redis state of namespace "${this.namespace}" is closed`
        : `Redis at ${this.where} is unavailable: ${describeError(this.lastError)}`,
      { cause: this.lastError, data: { namespace: this.namespace } },
    );
    return this.outageError;
  }

  async close(): Promise<void> {
    if (this.currentStatus === 'closed') return;
    this.currentStatus = 'closed';
    this.outageError = undefined;
    if (this.recoveryTimer !== undefined) this.clock.clearTimeout(this.recoveryTimer);
    this.commands.disconnect();
    this.subscriber.disconnect();
  }

  /**
   * An operation timed out: Redis is slow or gone. A PING decides: no answer within `unavailableAfterMs` (or a
   * failure) makes Redis unavailable; an answer means it was only slow, and the stores that decided a call without it
   * read their shared state again, quietly.
   */
  private checkHealth(): void {
    if (this.checkingHealth || this.currentStatus !== 'available') return;
    this.checkingHealth = true;
    const failures = this.failures;
    within(this.commands.ping(), this.unavailableAfterMs).then(
      () => {
        this.checkingHealth = false;
        if (failures !== this.failures || this.currentStatus !== 'available') return;
        const participants = [...this.participants.keys()];
        Promise.all(participants.map((participant) => participant.prepareResync())).then(
          (takeovers) => {
            if (failures !== this.failures || this.currentStatus !== 'available') return;
            for (const takeOver of takeovers) takeOver();
          },
          // A read that failed has been counted by run already.
          () => undefined,
        );
      },
      (error: unknown) => {
        this.checkingHealth = false;
        this.fail(
          error === TIMED_OUT
            ? new Error(
                `Redis did not answer a PING within ${this.unavailableAfterMs} ms (unavailableAfterMs)`,
              )
            : error,
        );
      },
    );
  }

  /** Redis failed: every policy follows its rule until a resynchronisation succeeds. */
  private fail(error: unknown): void {
    if (this.currentStatus === 'closed') return;
    this.failures++;
    this.lastError = error;
    if (this.currentStatus === 'unavailable') return;
    this.currentStatus = 'unavailable';
    this.outageError = undefined;
    this.unavailableSinceMs = this.clock.now();
    if (this.unavailableEvents.hasListeners) {
      this.unavailableEvents.emit({ atMs: this.unavailableSinceMs, error: this.unavailableError() });
    }
    this.scheduleRecovery();
  }

  private scheduleRecovery(): void {
    if (this.recoveryTimer !== undefined || this.currentStatus === 'closed') return;
    this.recoveryTimer = this.clock.setTimeout(() => {
      this.recoveryTimer = undefined;
      void this.recover();
    }, this.recoveryIntervalMs);
    (this.recoveryTimer as { unref?: () => void } | undefined)?.unref?.();
  }

  /**
   * Once both connections are ready: subscribes again, lets every participant read its shared state, and only when
   * all have (with no failure meanwhile) makes the state available and lets them take it over.
   */
  private async recover(): Promise<void> {
    if (this.recovering || this.currentStatus === 'available' || this.currentStatus === 'closed') return;
    if (this.commands.status !== 'ready' || this.subscriber.status !== 'ready') {
      if (this.currentStatus === 'unavailable') this.scheduleRecovery();
      return;
    }
    this.recovering = true;
    const failures = this.failures;
    try {
      await within(this.commands.ping(), this.unavailableAfterMs);
      if (this.channels.size > 0) await this.subscriber.subscribe(...this.channels.keys());
      const participants = [...this.participants.keys()];
      const takeovers = await Promise.all(participants.map((participant) => participant.prepareResync()));
      // A failure (or close) while the participants read makes this attempt void.
      if (failures !== this.failures || this.status === 'closed') return;
      const wasUnavailable = this.currentStatus === 'unavailable';
      this.currentStatus = 'available';
      this.outageError = undefined;
      for (const takeOver of takeovers) takeOver();
      // Stores made while this resynchronisation ran have not read their state yet.
      for (const [participant, channel] of this.participants) {
        if (!participants.includes(participant)) this.resyncOne(participant, channel);
      }
      for (const done of [...this.readyWaiters]) done();
      const nowMs = this.clock.now();
      if (wasUnavailable && this.recoveredEvents.hasListeners) {
        this.recoveredEvents.emit({ atMs: nowMs, unavailableForMs: nowMs - this.unavailableSinceMs });
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.recovering = false;
      if (this.currentStatus === 'unavailable') this.scheduleRecovery();
    }
  }

  /** A store that joined while Redis was available reads its shared state at once. */
  private resyncOne(participant: Participant, channel: string | undefined): void {
    const failures = this.failures;
    void (async () => {
      if (channel !== undefined) await this.subscriber.subscribe(channel);
      const takeOver = await participant.prepareResync();
      if (failures === this.failures && this.currentStatus === 'available') takeOver();
    })().catch((error: unknown) => this.fail(error));
  }
}

/** What {@link within} rejects with when the time is up. */
const TIMED_OUT = new Error('timed out');

/**
 * `promise`, or a rejection with {@link TIMED_OUT} after `timeoutMs` (real time: it measures Redis). Timers run before
 * the I/O of the same turn of the event loop, so the decision waits one more turn (`setImmediate`): an answer that
 * reached the socket while the loop was busy settles first, and a busy process is not taken for a slow Redis.
 */
function within<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(TIMED_OUT);
      });
    }, timeoutMs);
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return error === undefined ? 'no answer' : String(error);
}
