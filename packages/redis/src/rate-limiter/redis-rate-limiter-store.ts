import { type Clock, sleep } from '@keel/core';
import type { PolicyContext } from '@keel/core/adapter';
import { optionError } from '@keel/core/adapter';
import {
  memoryRateLimiterStore,
  type RateLimiterGrant,
  type RateLimiterStore,
  type RateLimiterStoreFactory,
  type RateLimiterStoreOptions,
} from '@keel/core/store';
import type { Participant, SharedConnection, UnavailableRule } from '../shared-connection.js';
import { checkOptionsObject, describe, requireChoice, requireName } from '../validation.js';

/** Options of `RedisState.rateLimiterStore`. */
export interface RedisRateLimiterStoreOptions {
  /** Names the shared bucket: every limiter of this name, in any process, takes from it. Required. */
  name: string;
  /** What the limiter does while Redis cannot be reached (see `RedisStateOptions.onUnavailable`). Defaults to the state's. */
  onUnavailable?: UnavailableRule;
  /**
   * Under `onUnavailable: 'local'`, the calls per second each process allows itself while Redis is unreachable.
   * Defaults to the limiter's own rate, so that a fleet of N processes may then make N times the shared rate: set it
   * to the shared rate divided by the number of processes to keep the fleet's total.
   */
  localRatePerSecond?: number;
}

const FACTORY = 'rateLimiterStore';

/** Makes rate limiter stores over `connection`; see `RedisState.rateLimiterStore`. */
export function redisRateLimiterStore(
  connection: SharedConnection,
  options: RedisRateLimiterStoreOptions,
): RateLimiterStoreFactory {
  checkOptionsObject(options, ['name', 'onUnavailable', 'localRatePerSecond'], FACTORY, "{ name: 'openai' }");
  const name = requireName(options.name, 'name', FACTORY);
  const rule = requireChoice(
    options.onUnavailable ?? connection.defaultRule,
    ['local', 'closed'],
    'onUnavailable',
    FACTORY,
  );
  const localRatePerSecond = options.localRatePerSecond;
  if (
    localRatePerSecond !== undefined &&
    (typeof localRatePerSecond !== 'number' ||
      !Number.isFinite(localRatePerSecond) ||
      localRatePerSecond <= 0)
  ) {
    throw optionError({
      where: FACTORY,
      option: 'localRatePerSecond',
      message: `localRatePerSecond must be a finite number above 0, got ${describe(localRatePerSecond)}`,
    });
  }
  return (storeOptions) =>
    new RedisRateLimiterStore(connection, connection.key('rate-limiter', name), rule, storeOptions, {
      ...storeOptions,
      ratePerMs: localRatePerSecond === undefined ? storeOptions.ratePerMs : localRatePerSecond / 1000,
    });
}

/**
 * A token bucket in Redis (GCRA, one script call per call: at most one round trip on the success path). A call that
 * must wait ('wait' mode) books its turn in the same call and sleeps here until then; one that aborts while it sleeps
 * gives its turn back. `tokens` is estimated from the last answer.
 */
class RedisRateLimiterStore implements RateLimiterStore, Participant {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private readonly maxWait: string;
  private readonly clock: Clock;
  private waiting = 0;
  /** TAT - now in the last answer, and when it came (this process's clock). */
  private lastTatMs = 0;
  private lastAnswerAtMs = Number.NEGATIVE_INFINITY;
  /** The store that stands in while Redis is unavailable (rule `local`). */
  private local: RateLimiterStore | undefined;

  constructor(
    private readonly connection: SharedConnection,
    private readonly key: string,
    private readonly rule: UnavailableRule,
    private readonly options: RateLimiterStoreOptions,
    private readonly localOptions: RateLimiterStoreOptions,
  ) {
    this.clock = options.clock;
    this.intervalMs = 1 / options.ratePerMs;
    this.toleranceMs = (options.bucketSize - 1) * this.intervalMs;
    this.maxWait =
      options.mode === 'reject' ? '0' : Number.isFinite(options.maxWaitMs) ? String(options.maxWaitMs) : '';
    connection.join(this);
  }

  get tokens(): number {
    if (this.local !== undefined) return this.local.tokens;
    const tatMs = this.lastTatMs - (this.clock.now() - this.lastAnswerAtMs);
    const tokens = (this.toleranceMs + this.intervalMs - Math.max(0, tatMs)) / this.intervalMs;
    return Math.min(this.options.bucketSize, Math.max(0, tokens));
  }

  get queued(): number {
    return this.waiting + (this.local?.queued ?? 0);
  }

  acquire(context: PolicyContext): RateLimiterGrant | Promise<RateLimiterGrant> {
    if (!this.connection.available) return this.acquireUnavailable(context);
    return this.acquireShared(context);
  }

  release(): void | Promise<void> {
    if (this.local !== undefined) return this.local.release();
    if (!this.connection.available) return;
    return this.call('release', '').then(
      () => undefined,
      () => undefined,
    );
  }

  async prepareResync(): Promise<() => void> {
    // Nothing to read: the bucket is the shared one again from the next call.
    return () => {
      this.local = undefined;
    };
  }

  private async acquireShared(context: PolicyContext): Promise<RateLimiterGrant> {
    let answer: [string, string, string];
    try {
      answer = (await this.call('acquire', this.maxWait)) as [string, string, string];
    } catch {
      return this.acquireUnavailable(context);
    }
    const [outcome, wait, tat] = answer;
    const waitMs = Number(wait);
    this.lastTatMs = Number(tat);
    this.lastAnswerAtMs = this.clock.now();
    if (outcome === 'refused') return { kind: 'refused', retryAfterMs: Math.max(1, Math.ceil(waitMs)) };
    if (waitMs <= 0) return true;
    this.waiting++;
    try {
      await sleep(Math.ceil(waitMs), this.clock, context.signal);
    } catch (reason) {
      await this.release();
      throw reason;
    } finally {
      this.waiting--;
    }
    return true;
  }

  private acquireUnavailable(context: PolicyContext): RateLimiterGrant | Promise<RateLimiterGrant> {
    if (this.rule === 'closed') {
      return {
        kind: 'refused',
        retryAfterMs: this.connection.recoveryIntervalMs,
        cause: this.connection.unavailableError(),
      };
    }
    this.local ??= memoryRateLimiterStore(this.localOptions);
    return this.local.acquire(context);
  }

  private call(operation: 'acquire' | 'release', maxWait: string): Promise<unknown> {
    const nowArgument = this.connection.timeSource === 'clock' ? String(this.clock.now()) : '';
    return this.connection.run('rateLimiter', this.key, [
      operation,
      nowArgument,
      String(this.intervalMs),
      String(this.toleranceMs),
      maxWait,
    ]);
  }
}
