import { type Clock, systemClock, type TimerHandle } from './clock.js';
import { NEVER_ABORTED_SIGNAL, runInContext, toContext } from './context.js';
import { MAX_DELAY_MS } from './delays.js';
import { EventEmitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { rejectionError } from './rejection.js';
import {
  invalidOption,
  rejectUnknownOptions,
  requireClock,
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
  const rejections = new EventEmitter<RateLimiterRejectedEvent>();
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

  // A slow rate can put the next token further away than a timer can wait: wake at the limit and look again.
  const armQueueTimer = (): void => {
    timer = clock.setTimeout(serveQueue, Math.min(msUntil(1), MAX_DELAY_MS));
  };

  const reject = (retryAfterMs: number): Promise<never> => {
    if (rejections.hasListeners) rejections.emit({ retryAfterMs });
    return Promise.reject(
      rejectionError('policy.rate_limited', `rate limit reached: next call allowed in ${retryAfterMs} ms`, {
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
    if (queue.size > 0) armQueueTimer();
  };

  /** Gives back the token of a waiter that was served but aborted before its call started. */
  const refund = (): void => {
    refill();
    tokens = Math.min(bucketSize, tokens + 1);
    if (queue.size === 0) return;
    // The next waiter need not wait for the refill the armed timer is set for.
    if (timer !== undefined) clock.clearTimeout(timer);
    serveQueue();
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
      if (timer === undefined) armQueueTimer();
    });
  };

  return {
    execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      const context = toContext(signal);
      if (context.aborted) return Promise.reject(context.signal.reason);
      refill();
      if (queue.size === 0 && tokens + EPSILON >= 1) {
        tokens = Math.max(0, tokens - 1);
        return runInContext(fn, context);
      }
      if (mode === 'reject') return reject(msUntil(1));
      return wait(context).then(() => {
        // Aborted between the hand-off and this callback: give the token back rather than start doomed work.
        if (context.aborted) {
          refund();
          throw context.signal.reason;
        }
        return runInContext(fn, context);
      });
    },
    get tokens() {
      refill();
      return tokens;
    },
    get queued() {
      return queue.size;
    },
    onRejected: rejections.event,
  };
}

interface ValidOptions {
  ratePerMs: number;
  bucketSize: number;
  mode: 'reject' | 'wait';
  maxWaitMs: number;
  clock: Clock;
}

const FACTORY = 'rateLimiter';

const KNOWN_OPTIONS = [
  'ratePerSecond',
  'tokensPerInterval',
  'intervalMs',
  'bucketSize',
  'mode',
  'maxWaitMs',
  'clock',
];

function validate(options: RateLimiterOptions): ValidOptions {
  requireOptionsObject(options, FACTORY, '{ ratePerSecond: 5 }');
  rejectUnknownOptions(options, KNOWN_OPTIONS, FACTORY);
  const { ratePerSecond, tokensPerInterval, mode = 'reject' } = options;
  if ((ratePerSecond === undefined) === (tokensPerInterval === undefined)) {
    throw invalidOption(
      FACTORY,
      'ratePerSecond',
      'give exactly one of ratePerSecond or tokensPerInterval (with intervalMs)',
    );
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
    throw invalidOption(FACTORY, 'mode', `mode must be 'reject' or 'wait', got ${String(mode)}`);
  }
  // Infinity means no cap: maxWaitMs is only ever compared with a computed wait, never armed as a timer.
  const maxWaitMs = requireNonNegativeNumber(options.maxWaitMs ?? 30_000, 'maxWaitMs', FACTORY);
  const clock = requireClock(options.clock ?? systemClock, FACTORY);
  return { ratePerMs, bucketSize, mode, maxWaitMs, clock };
}
