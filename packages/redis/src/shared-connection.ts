import type { Clock, KeelError } from '@keel/core';

/** The Lua scripts a connection runs, by name. */
export type ScriptName = 'breaker' | 'rateLimiter' | 'retryBudget' | 'budget' | 'pace';

/** What each kind of shared state is called in its key: `keel:<namespace>:<kind>:<name>`. */
export type StateKind = 'breaker' | 'rate-limiter' | 'retry-budget' | 'budget' | 'pace';

/** What a policy does while Redis cannot be reached: go on with state of its own, or refuse calls. */
export type UnavailableRule = 'local' | 'closed';

/**
 * A store that keeps a local copy of shared state. After an outage (and on the first connection), the connection asks
 * every participant for its state in two steps: `prepareResync` reads from Redis (it may fail, and then nothing
 * changes), and the function it returns takes the state over, once every participant has read its own.
 */
export interface Participant {
  prepareResync(): Promise<() => void>;
}

/** The part of a `RedisState` its stores use. */
export interface SharedConnection {
  readonly namespace: string;
  /** True while Redis answers; policies follow their `onUnavailable` rule otherwise. */
  readonly available: boolean;
  readonly ttlMs: number;
  readonly recoveryIntervalMs: number;
  /** How long a breaker's probe slot is held without a renewal by its holder, in ms (see `RedisStateOptions`). */
  readonly probeSlotTtlMs: number;
  /** The rule of stores that set none. */
  readonly defaultRule: UnavailableRule;
  /** `'redis'`: scripts read the server's clock; `'clock'`: each store passes its own clock's time. */
  readonly timeSource: 'redis' | 'clock';
  key(kind: StateKind, name: string): string;
  /**
   * Runs a script on `key` and resolves with its answer, or rejects with `store.unavailable`: a failure marks Redis
   * unavailable; a timeout (`operationTimeoutMs`) fails this operation alone and has Redis's health checked (see
   * `unavailableAfterMs`). `late` receives the answer of an operation that timed out, should it come after all.
   */
  run(
    script: ScriptName,
    key: string,
    args: readonly string[],
    late?: (answer: unknown) => void,
  ): Promise<unknown>;
  /** As `run`, for a script over several keys (the budget's counters of one call, a pace window's four keys). */
  runKeys(script: ScriptName, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Delivers every message published on `channel` to `listener`, from now on and after every reconnection. */
  subscribe(channel: string, listener: (message: string) => void): void;
  /**
   * Takes part in resynchronisation after outages (see {@link Participant}), and reads its state at once when Redis is
   * available. `channel`: one the participant listens on (see `subscribe`), to be subscribed before that first read.
   */
  join(participant: Participant, channel?: string): void;
  /** The error policies hand out while Redis is unavailable (`store.unavailable`, with the last failure as cause). */
  unavailableError(): KeelError;
  readonly clock: Clock;
}
