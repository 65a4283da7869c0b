import { randomUUID } from 'node:crypto';
import { optionError, requireInteger } from '@keel/core/adapter';
import type { Redis } from 'ioredis';

/**
 * The worker's `tenants` option: how many runs of one tenant (`submit`'s `tenant`; runs with none are tenant
 * `default`) the whole fleet runs at once, across every worker on the same Redis and prefix. A job whose tenant has
 * all its places taken goes back to the queue, delayed by `retryDelayMs`, rather than hold a worker's slot; another
 * tenant's runs go on meanwhile. The order in which a tenant's waiting runs then start is not guaranteed.
 *
 * A place is a lease in Redis (a sorted set per tenant, scored by when each lease ends), renewed while its run goes
 * on: a worker that dies (SIGKILL) stops renewing, and its places come back `leaseMs` later at most. Give every worker
 * of a fleet the same limits: each one checks the shared count against its own.
 *
 * @example
 *   runWorker({ agents, store, redis, tenants: { maxConcurrentRuns: 2, perTenant: { acme: 10 } } });
 */
export interface WorkerTenantOptions {
  /** Most runs of one tenant at once in the fleet. Required: a positive integer. */
  maxConcurrentRuns: number;
  /** Limits of named tenants, in place of `maxConcurrentRuns` for them: `{ acme: 10 }`. Defaults to none. */
  perTenant?: Readonly<Record<string, number>>;
  /** How long a place is held without a renewal, in ms (renewed every third of it while the run goes on). Defaults to 30_000. */
  leaseMs?: number;
  /** How long a job refused a place waits in the queue before it is tried again, in ms. Defaults to 1_000. */
  retryDelayMs?: number;
}

/** The tenant of runs that name none (as `@keel/core`'s budgets have it). */
export const DEFAULT_TENANT = 'default';

/** One run's place, held until `release`; renewed in the background meanwhile. */
export interface TenantPlace {
  release(): Promise<void>;
}

// Drops the leases that ended, then takes a place when there is one (or renews the holder's own): 1, else 0 and the
// ms until the first lease ends.
const ACQUIRE = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local holder = ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, holder) or redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now + lease, holder)
  redis.call('PEXPIRE', key, lease * 2)
  return {1, 0}
end
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(first[2]) - now}
`;

// Renews a place still held; a lease that ended (and may be someone else's place now) is not taken back.
const RENEW = `
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return 1
`;

/** The places of tenants' runs in a fleet, in Redis. */
export class TenantSlots {
  readonly retryDelayMs: number;
  private readonly leaseMs: number;
  private readonly maxConcurrentRuns: number;
  private readonly perTenant: ReadonlyMap<string, number>;
  /**
   * This worker's part of every place it holds (`<runId>:<workerId>`): a stalled job taken by another worker while
   * this one still runs it gets a place of its own (or none), and its release never frees this worker's.
   */
  private readonly workerId = randomUUID();

  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
    options: WorkerTenantOptions,
    where = 'runWorker',
  ) {
    if (typeof options !== 'object' || options === null) {
      throw optionError({
        where,
        option: 'tenants',
        message: 'tenants must be an object such as { maxConcurrentRuns: 2 }',
      });
    }
    const known = ['maxConcurrentRuns', 'perTenant', 'leaseMs', 'retryDelayMs'];
    for (const key of Object.keys(options)) {
      if (!known.includes(key)) {
        throw optionError({
          where,
          option: `tenants.${key}`,
          message: `tenants has an unknown option "${key}"; known: ${known.join(', ')}`,
        });
      }
    }
    this.maxConcurrentRuns = requireInteger(options.maxConcurrentRuns, {
      where,
      option: 'tenants.maxConcurrentRuns',
      min: 1,
    });
    const perTenant = new Map<string, number>();
    if (
      options.perTenant !== undefined &&
      (typeof options.perTenant !== 'object' ||
        options.perTenant === null ||
        Array.isArray(options.perTenant))
    ) {
      throw optionError({
        where,
        option: 'tenants.perTenant',
        message: `tenants.perTenant must be an object by tenant, such as { acme: 10 }; got ${JSON.stringify(options.perTenant)}`,
      });
    }
    for (const [tenant, limit] of Object.entries(options.perTenant ?? {})) {
      perTenant.set(tenant, requireInteger(limit, { where, option: `tenants.perTenant.${tenant}`, min: 1 }));
    }
    this.perTenant = perTenant;
    this.leaseMs = requireInteger(options.leaseMs, {
      where,
      option: 'tenants.leaseMs',
      min: 100,
      default: 30_000,
    });
    this.retryDelayMs = requireInteger(options.retryDelayMs, {
      where,
      option: 'tenants.retryDelayMs',
      min: 0,
      default: 1_000,
    });
  }

  /** The limit of `tenant`'s runs. */
  limitOf(tenant: string): number {
    return this.perTenant.get(tenant) ?? this.maxConcurrentRuns;
  }

  /**
   * Takes a place of `tenant`'s for `holder` (`hold` uses `<runId>:<workerId>`) at `nowMs`, or says how long until the first lease ends.
   * One Redis round trip. Rejects when Redis does.
   */
  async take(
    tenant: string,
    holder: string,
    nowMs = Date.now(),
  ): Promise<{ taken: true } | { taken: false; leaseEndsInMs: number }> {
    const [taken, leaseEndsInMs] = (await this.client.eval(
      ACQUIRE,
      1,
      this.keyOf(tenant),
      nowMs,
      this.leaseMs,
      this.limitOf(tenant),
      holder,
    )) as [number, number];
    return taken === 1 ? { taken: true } : { taken: false, leaseEndsInMs };
  }

  /** Renews `holder`'s place, if it still holds one. */
  async renew(tenant: string, holder: string, nowMs = Date.now()): Promise<void> {
    await this.client.eval(RENEW, 1, this.keyOf(tenant), nowMs, this.leaseMs, holder);
  }

  /** Gives `holder`'s place back. */
  async give(tenant: string, holder: string): Promise<void> {
    await this.client.zrem(this.keyOf(tenant), holder);
  }

  /** The holders of `tenant`'s places now (`<runId>:<workerId>`), leases that ended included until the next `take`. */
  async holders(tenant: string): Promise<string[]> {
    return this.client.zrange(this.keyOf(tenant), 0, -1);
  }

  /**
   * Takes a place for a run and renews it every third of `leaseMs` until `release`; undefined when the tenant has
   * none free. Rejects when Redis does.
   */
  async hold(tenant: string, runId: string): Promise<TenantPlace | undefined> {
    const holder = `${runId}:${this.workerId}`;
    const answer = await this.take(tenant, holder);
    if (!answer.taken) return undefined;
    const timer = setInterval(
      () => {
        // A renewal Redis misses is tried again at the next tick; the lease outlasts two of them.
        this.renew(tenant, holder).catch(() => undefined);
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        // A place Redis does not take back now comes back when its lease ends.
        await this.give(tenant, holder).catch(() => undefined);
      },
    };
  }

  private keyOf(tenant: string): string {
    return `${this.prefix}:tenants:${encodeURIComponent(tenant)}:running`;
  }
}
