import { optionError } from '../options/option-error.js';
import { type Clock, systemClock } from './clock.js';
import { runInContext, toContext } from './context.js';
import { Emitter } from './events.js';
import { memoryRateLimiterStore } from './in-memory-rate-limiter-store.js';
import type { Event, Policy, PolicyFunction, SignalInput } from './policy.js';
import { isPromiseLike } from './promise.js';
import type {
  RateLimiterRefusal,
  RateLimiterStoreFactory,
  RateLimiterStoreOptions,
} from './rate-limiter-store.js';
import { rejectionError } from './rejection.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireFunction,
  requireNonNegativeNumber,
  requireOptionsObject,
} from './validate.js';

/** Options of {@link rateLimiter}. Give the rate either as `ratePerSecond` or as `tokensPerInterval` + `intervalMs`. */
export interface RateLimiterOptions {
  /** Calls allowed per second on average. Either this or `tokensPerInterval` is required. */
  ratePerSecond?: number;
  /** Calls allowed per `intervalMs` on average. Either this or `ratePerSecond` is required. */
  tokensPerInterval?: number;
  /** The interval `tokensPerInterval` refers to. Defaults to 1000 ms. */
  intervalMs?: number;
  /**
   * The most calls allowed in a burst (the bucket's capacity; it starts full). Defaults to `tokensPerInterval`, or
   * `ratePerSecond` rounded up, and never less than 1.
   */
  bucketSize?: number;
  /**
   * What a call does when no token is left: `'reject'` fails at once with `policy.rate_limited`; `'wait'` waits its
   * turn (first come, first served). Defaults to `'reject'`.
   */
  mode?: 'reject' | 'wait';
  /**
   * In `'wait'` mode, the longest a call may wait for its token; a call that would wait longer is rejected at once
   * with `policy.rate_limited`. `Infinity` means no cap. Defaults to 30_000 ms. Ignored in `'reject'` mode.
   */
  maxWaitMs?: number;
  /**
   * Where the tokens live. Defaults to `memoryRateLimiterStore`, a bucket in this process; a shared store (such as
   * `@keel/redis`) makes every process take from one bucket.
   */
  store?: RateLimiterStoreFactory;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted when a call is rejected with `policy.rate_limited`. */
export interface RateLimiterRejectedEvent {
  /** How long until the call could have had its token. */
  readonly retryAfterMs: number;
}

/** A token bucket limiting how often calls start. */
export interface RateLimiterPolicy extends Policy {
  /** Tokens available now (fractional while refilling). */
  readonly tokens: number;
  /** Calls waiting for a token now (`'wait'` mode). */
  readonly queued: number;
  /** Fires when a call is rejected with `policy.rate_limited`. */
  readonly onRejected: Event<RateLimiterRejectedEvent>;
}

/**
 * Limits how often calls start, with a token bucket: each call takes a token; tokens come back at the configured
 * rate up to `bucketSize`. The refill is computed from `clock.now()` when a call arrives, so no interval timer runs.
 * A rejection is `policy.rate_limited` (retryable) with `retryAfterMs` = time until a token is available.
 *
 * @example
 *   const limiter = rateLimiter({ ratePerSecond: 5, bucketSize: 10, mode: 'wait', maxWaitMs: 5_000 });
 *   await limiter.execute(() => callTool(input), signal);
 */
export function rateLimiter(options: RateLimiterOptions): RateLimiterPolicy {
  const { store: createStore, ...settings } = validate(options);
  const store = createStore(settings);
  const rejections = new Emitter<RateLimiterRejectedEvent>();
  const ratePerSecond = settings.ratePerMs * 1000;

  const reject = (refusal: RateLimiterRefusal): Promise<never> => {
    const { retryAfterMs } = refusal;
    if (rejections.hasListeners) rejections.emit({ retryAfterMs });
    return Promise.reject(
      rejectionError('policy.rate_limited', `rate limit reached: next call allowed in ${retryAfterMs} ms`, {
        retryAfterMs,
        data: { retryAfterMs, bucketSize: settings.bucketSize, ratePerSecond },
        cause: refusal.cause,
      }),
    );
  };

  return {
    execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      const context = toContext(signal);
      if (context.aborted) return Promise.reject(context.signal.reason);
      const grant = store.acquire(context);
      if (grant === true) return runInContext(fn, context);
      if (!isPromiseLike(grant)) return reject(grant);
      return grant.then((answer) => {
        if (answer !== true) return reject(answer);
        // Aborted between the hand-off and this callback: give the token back rather than start doomed work.
        if (context.aborted) {
          const released = store.release();
          if (isPromiseLike(released)) return released.then(() => Promise.reject(context.signal.reason));
          throw context.signal.reason;
        }
        return runInContext(fn, context);
      });
    },
    get tokens() {
      return store.tokens;
    },
    get queued() {
      return store.queued;
    },
    onRejected: rejections.event,
  };
}

interface ValidOptions extends RateLimiterStoreOptions {
  store: RateLimiterStoreFactory;
}

const FACTORY = 'rateLimiter';

const KNOWN_OPTIONS = [
  'ratePerSecond',
  'tokensPerInterval',
  'intervalMs',
  'bucketSize',
  'mode',
  'maxWaitMs',
  'store',
  'clock',
];

function validate(options: RateLimiterOptions): ValidOptions {
  requireOptionsObject(options, FACTORY, '{ ratePerSecond: 5 }');
  rejectUnknownOptions(options, KNOWN_OPTIONS, FACTORY);
  const { ratePerSecond, tokensPerInterval, mode = 'reject' } = options;
  if ((ratePerSecond === undefined) === (tokensPerInterval === undefined)) {
    throw optionError({
      where: FACTORY,
      option: 'ratePerSecond',
      message: 'give exactly one of ratePerSecond or tokensPerInterval (with intervalMs)',
    });
  }
  const positive = { minimum: Number.MIN_VALUE, finite: true };
  if (ratePerSecond !== undefined)
    requireNonNegativeNumber(ratePerSecond, 'ratePerSecond', FACTORY, positive);
  if (tokensPerInterval !== undefined) {
    requireNonNegativeNumber(tokensPerInterval, 'tokensPerInterval', FACTORY, positive);
  }
  const intervalMs = requireNonNegativeNumber(options.intervalMs ?? 1000, 'intervalMs', FACTORY, positive);
  const ratePerMs = ratePerSecond !== undefined ? ratePerSecond / 1000 : tokensPerInterval! / intervalMs;
  const bucketSize = requireNonNegativeNumber(
    options.bucketSize ?? Math.max(1, Math.ceil(ratePerSecond ?? tokensPerInterval!)),
    'bucketSize',
    FACTORY,
    { minimum: 1, finite: true },
  );
  if (mode !== 'reject' && mode !== 'wait') {
    throw optionError({
      where: FACTORY,
      option: 'mode',
      message: `mode must be 'reject' or 'wait', got ${String(mode)}`,
    });
  }
  // Infinity means no cap: maxWaitMs is only ever compared with a computed wait, never armed as a timer.
  const maxWaitMs = requireNonNegativeNumber(options.maxWaitMs ?? 30_000, 'maxWaitMs', FACTORY);
  const store = requireFunction(
    options.store ?? memoryRateLimiterStore,
    'store',
    FACTORY,
    '(options) => RateLimiterStore, such as memoryRateLimiterStore',
  );
  const clock = requireClock(options.clock ?? systemClock, FACTORY);
  return { ratePerMs, bucketSize, mode, maxWaitMs, store, clock };
}
