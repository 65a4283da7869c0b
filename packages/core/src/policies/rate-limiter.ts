import { isControlSignal } from '../errors/control.js';
import { KeelError } from '../errors/keel-error.js';
import { type Clock, systemClock, type TimerHandle } from './clock.js';
import { NEVER_ABORTED_SIGNAL, toContext } from './context.js';
import { EventEmitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';

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
   * with `policy.rate_limited`. Defaults to 30_000 ms. Ignored in `'reject'` mode.
   */
  maxWaitMs?: number;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** Emitted when a call is rejected with `policy.rate_limited`. */
export interface RateLimitRejectEvent {
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
  readonly onReject: Event<RateLimitRejectEvent>;
}

interface Waiter {
  resolve: () => void;
  signal: AbortSignal;
  onAbort: () => void;
}

// Floating-point refills can land a hair below a whole token at the instant one is due.
const EPSILON = 1e-9;

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
  const { ratePerMs, bucketSize, mode, maxWaitMs, clock } = validate(options);
  const rejects = new EventEmitter<RateLimitRejectEvent>();
  const queue = new Set<Waiter>();
  let tokens = bucketSize;
  let refilledAtMs = clock.now();
  let timer: TimerHandle | undefined;

  const refill = (): void => {
    const nowMs = clock.now();
    // A clock that steps backwards must not drain the bucket.
    if (nowMs > refilledAtMs) tokens = Math.min(bucketSize, tokens + (nowMs - refilledAtMs) * ratePerMs);
    refilledAtMs = nowMs;
  };

  const msUntil = (neededTokens: number): number =>
    Math.max(1, Math.ceil((neededTokens - tokens) / ratePerMs));

  const reject = (retryAfterMs: number): Promise<never> => {
    if (rejects.hasListeners) rejects.emit({ retryAfterMs });
    return Promise.reject(
      new KeelError('policy.rate_limited', `rate limit reached: next call allowed in ${retryAfterMs} ms`, {
        retryAfterMs,
        data: { retryAfterMs, bucketSize, ratePerSecond: ratePerMs * 1000 },
      }),
    );
  };

  // One timer serves the whole queue, instead of a sleep per waiter with pre-computed turns: a waiter that aborts
  // hands its turn to the next one at once rather than leaving a hole in the schedule.
  const serveQueue = (): void => {
    timer = undefined;
    refill();
    for (const waiter of queue) {
      if (tokens + EPSILON < 1) break;
      tokens = Math.max(0, tokens - 1);
      queue.delete(waiter);
      if (waiter.signal !== NEVER_ABORTED_SIGNAL) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (queue.size > 0) timer = clock.setTimeout(serveQueue, msUntil(1));
  };

  const wait = (context: PolicyContext): Promise<void> => {
    // Everyone queued is served first, so this call needs one token more than the queue holds.
    const waitMs = msUntil(queue.size + 1);
    if (waitMs > maxWaitMs) return reject(waitMs);
    return new Promise<void>((resolve, rejectWait) => {
      const signal = context.signal;
      const waiter: Waiter = {
        resolve,
        signal,
        onAbort: () => {
          queue.delete(waiter);
          if (queue.size === 0 && timer !== undefined) {
            clock.clearTimeout(timer);
            timer = undefined;
          }
          rejectWait(signal.reason);
        },
      };
      queue.add(waiter);
      if (signal !== NEVER_ABORTED_SIGNAL) signal.addEventListener('abort', waiter.onAbort, { once: true });
      if (timer === undefined) timer = clock.setTimeout(serveQueue, msUntil(1));
    });
  };

  const run = async <T>(fn: PolicyFunction<T>, context: PolicyContext): Promise<T> => {
    try {
      return await fn(context);
    } catch (error) {
      if (!isControlSignal(error) && context.aborted) throw context.signal.reason;
      throw error;
    }
  };

  return {
    execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      const context = toContext(signal);
      if (context.aborted) return Promise.reject(context.signal.reason);
      refill();
      if (queue.size === 0 && tokens + EPSILON >= 1) {
        tokens = Math.max(0, tokens - 1);
        return run(fn, context);
      }
      if (mode === 'reject') return reject(msUntil(1));
      return wait(context).then(() => {
        if (context.aborted) throw context.signal.reason;
        return run(fn, context);
      });
    },
    get tokens() {
      refill();
      return tokens;
    },
    get queued() {
      return queue.size;
    },
    onReject: rejects.event,
  };
}

interface ValidOptions {
  ratePerMs: number;
  bucketSize: number;
  mode: 'reject' | 'wait';
  maxWaitMs: number;
  clock: Clock;
}

function invalid(message: string): KeelError {
  return new KeelError('config.invalid', `rateLimiter: ${message}`);
}

function isPositiveFinite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function validate(options: RateLimiterOptions): ValidOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid('options must be an object such as { ratePerSecond: 5 }');
  }
  const {
    ratePerSecond,
    tokensPerInterval,
    intervalMs = 1000,
    mode = 'reject',
    maxWaitMs = 30_000,
  } = options;
  if ((ratePerSecond === undefined) === (tokensPerInterval === undefined)) {
    throw invalid('give exactly one of ratePerSecond or tokensPerInterval (with intervalMs)');
  }
  if (ratePerSecond !== undefined && !isPositiveFinite(ratePerSecond)) {
    throw invalid(`ratePerSecond must be a positive number, got ${String(ratePerSecond)}`);
  }
  if (tokensPerInterval !== undefined && !isPositiveFinite(tokensPerInterval)) {
    throw invalid(`tokensPerInterval must be a positive number, got ${String(tokensPerInterval)}`);
  }
  if (!isPositiveFinite(intervalMs))
    throw invalid(`intervalMs must be a positive number, got ${String(intervalMs)}`);
  const ratePerMs = ratePerSecond !== undefined ? ratePerSecond / 1000 : tokensPerInterval! / intervalMs;
  const bucketSize = options.bucketSize ?? Math.max(1, Math.ceil(ratePerSecond ?? tokensPerInterval!));
  if (!isPositiveFinite(bucketSize) || bucketSize < 1) {
    throw invalid(`bucketSize must be a number of at least 1, got ${String(options.bucketSize)}`);
  }
  if (mode !== 'reject' && mode !== 'wait')
    throw invalid(`mode must be 'reject' or 'wait', got ${String(mode)}`);
  if (typeof maxWaitMs !== 'number' || Number.isNaN(maxWaitMs) || maxWaitMs < 0) {
    throw invalid(`maxWaitMs must be a non-negative number of milliseconds, got ${String(maxWaitMs)}`);
  }
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function') {
    throw invalid('clock must have now(), setTimeout() and clearTimeout()');
  }
  return { ratePerMs, bucketSize, mode, maxWaitMs, clock };
}
