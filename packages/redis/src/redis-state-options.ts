import { type Clock, systemClock } from '@keel/core';
import { optionError } from '@keel/core/adapter';
import type { Redis } from 'ioredis';
import type { UnavailableRule } from './shared-connection.js';
import {
  checkOptionsObject,
  describe,
  requireChoice,
  requireMilliseconds,
  requireName,
} from './validation.js';

/** Options of {@link redisState}. */
export interface RedisStateOptions {
  /** The server, such as `redis://127.0.0.1:6379/0` (or `rediss://` for TLS). Required unless `client` is given. */
  url?: string;
  /**
   * An ioredis client to take the connection settings from: the state opens two connections of its own with them
   * (`client.duplicate()`, one for commands and one for pub/sub) and never uses or closes `client` itself.
   */
  client?: Redis;
  /**
   * Separates fleets sharing one Redis: every key is `keel:<namespace>:<kind>:<name>`. A non-empty string without
   * whitespace or colons. Defaults to `'default'`.
   */
  namespace?: string;
  /**
   * Longest one Redis operation may take, in milliseconds: a call waits for Redis at most this long, then is decided
   * without it (see `unavailableAfterMs` for when Redis counts as unavailable). Defaults to 100: a loopback round trip
   * takes about 0.1, so a stalled Redis delays a call by at most this. An answer already read from the socket when
   * the time is up (a busy event loop) still counts.
   */
  operationTimeoutMs?: number;
  /**
   * How long Redis may go without answering before it counts as unavailable, in milliseconds. An operation that
   * times out fails alone (its call is decided without Redis) and sends a PING: Redis is unavailable only if that
   * PING gets no answer within this (or a connection closes, or a command fails). A slow answer, a busy host or a
   * Redis paused for a moment is not an outage. At least `operationTimeoutMs`. Defaults to 1_000.
   */
  unavailableAfterMs?: number;
  /**
   * What policies do while Redis cannot be reached, unless a store says otherwise:
   * - `'local'` (fail open to local state): each process goes on alone, its breakers starting from the last shared
   *   state it saw, its rate limiters and budgets counting for itself; the shared state is taken back when Redis
   *   returns and wins over what was counted locally.
   * - `'closed'` (fail closed): calls are refused (`policy.circuit_open`, `policy.rate_limited`, retries denied) with
   *   a `store.unavailable` cause, until Redis is back.
   * Defaults to `'local'`.
   */
  onUnavailable?: UnavailableRule;
  /** While Redis is unavailable, how often to check whether it is back, in milliseconds. Defaults to 1_000. */
  recoveryIntervalMs?: number;
  /**
   * How long a breaker's or a retry budget's shared state outlives its last use, in milliseconds (every use refreshes
   * it). Must outlast a breaker's longest open period. Defaults to 86_400_000 (a day). Rate limiter keys expire on
   * their own, 10 s after their bucket would be full again.
   */
  ttlMs?: number;
  /**
   * Where the shared state's time comes from: `'redis'`, the server's clock (`TIME`), one clock for the whole fleet
   * whatever the machines' clocks say; or `'clock'`, each policy's own clock, passed to every script (for tests with
   * a fake clock). Defaults to `'redis'`.
   */
  timeSource?: 'redis' | 'clock';
  /** Longest `ready()` waits for the first connection, in milliseconds. Defaults to 5_000. */
  connectTimeoutMs?: number;
  /**
   * How long a half-open breaker's probe slot is held without a renewal, in milliseconds. The process that took the
   * slot renews it every third of this while its probe runs; a slot nobody renews (its admission timed out in the
   * process though Redis ran it, or its process died) is freed this long after it was taken, rather than at the
   * probe's deadline (`probeTimeoutMs`, the model's timeout), so the fleet probes again soon. At least 300. Defaults
   * to 3_000.
   */
  probeSlotTtlMs?: number;
  /** Where recovery checks and event times take their time from. Defaults to the system clock. */
  clock?: Clock;
}

/** {@link RedisStateOptions}, checked, with every default applied. */
export interface RedisStateSettings {
  readonly url: string | undefined;
  readonly client: Redis | undefined;
  readonly namespace: string;
  readonly operationTimeoutMs: number;
  readonly unavailableAfterMs: number;
  readonly onUnavailable: UnavailableRule;
  readonly recoveryIntervalMs: number;
  readonly ttlMs: number;
  readonly timeSource: 'redis' | 'clock';
  readonly connectTimeoutMs: number;
  readonly probeSlotTtlMs: number;
  readonly clock: Clock;
}

const FACTORY = 'redisState';
const KNOWN_OPTIONS = [
  'url',
  'client',
  'namespace',
  'operationTimeoutMs',
  'unavailableAfterMs',
  'onUnavailable',
  'recoveryIntervalMs',
  'ttlMs',
  'timeSource',
  'connectTimeoutMs',
  'probeSlotTtlMs',
  'clock',
];

/** Checks {@link redisState}'s options: `config.invalid` names the option at fault. */
export function resolveStateOptions(options: RedisStateOptions): RedisStateSettings {
  checkOptionsObject(options, KNOWN_OPTIONS, FACTORY, "{ url: 'redis://127.0.0.1:6379' }");
  const { url, client } = options;
  if (client !== undefined) {
    if (typeof (client as { duplicate?: unknown } | null)?.duplicate !== 'function') {
      throw optionError({
        where: FACTORY,
        option: 'client',
        message: `client must be an ioredis client, got ${describe(client)}`,
      });
    }
    if (url !== undefined)
      throw optionError({ where: FACTORY, option: 'url', message: 'give either url or client, not both' });
  } else if (typeof url !== 'string' || !/^rediss?:\/\//.test(url)) {
    throw optionError({
      where: FACTORY,
      option: 'url',
      message: `url must be a Redis URL such as redis://127.0.0.1:6379 (or give client), got ${describe(url)}`,
    });
  }
  const clock = (options.clock ?? systemClock) as Partial<Clock> | null;
  if (
    typeof clock?.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw optionError({
      where: FACTORY,
      option: 'clock',
      message: `clock must be a Clock with now, setTimeout and clearTimeout`,
    });
  }
  const operationTimeoutMs = requireMilliseconds(
    options.operationTimeoutMs ?? 100,
    'operationTimeoutMs',
    FACTORY,
  );
  return {
    url,
    client,
    namespace: requireName(options.namespace ?? 'default', 'namespace', FACTORY, true),
    operationTimeoutMs,
    unavailableAfterMs: requireMilliseconds(
      options.unavailableAfterMs ?? Math.max(1_000, operationTimeoutMs),
      'unavailableAfterMs',
      FACTORY,
      operationTimeoutMs,
    ),
    onUnavailable: requireChoice(
      options.onUnavailable ?? 'local',
      ['local', 'closed'],
      'onUnavailable',
      FACTORY,
    ),
    recoveryIntervalMs: requireMilliseconds(
      options.recoveryIntervalMs ?? 1_000,
      'recoveryIntervalMs',
      FACTORY,
    ),
    ttlMs: requireMilliseconds(options.ttlMs ?? 86_400_000, 'ttlMs', FACTORY, 1_000),
    timeSource: requireChoice(options.timeSource ?? 'redis', ['redis', 'clock'], 'timeSource', FACTORY),
    connectTimeoutMs: requireMilliseconds(options.connectTimeoutMs ?? 5_000, 'connectTimeoutMs', FACTORY),
    probeSlotTtlMs: requireMilliseconds(options.probeSlotTtlMs ?? 3_000, 'probeSlotTtlMs', FACTORY, 300),
    clock: clock as Clock,
  };
}
