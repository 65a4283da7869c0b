import type { MaybePromise } from './breaker/breaker-store.js';
import type { Clock } from './clock.js';
import type { PolicyContext } from './policy.js';

/** A call refused for want of a token. */
export interface RateLimiterRefusal {
  readonly kind: 'refused';
  /** How long until the call could have had its token, in milliseconds (at least 1). */
  readonly retryAfterMs: number;
  /** Why, when it is not simply an empty bucket (a shared store that cannot be reached, say); the error's `cause`. */
  readonly cause?: unknown;
}

/** What a store answers when a call asks for a token: `true` once the call has it, or a refusal. */
export type RateLimiterGrant = true | RateLimiterRefusal;

/** What a store factory receives from the rate limiter it serves (validated, defaults applied). */
export interface RateLimiterStoreOptions {
  /** Tokens that come back per millisecond. */
  readonly ratePerMs: number;
  /** The bucket's capacity: the most calls in a burst. The bucket starts full. */
  readonly bucketSize: number;
  /** `'reject'`: a call with no token is refused at once. `'wait'`: it waits its turn, up to `maxWaitMs`. */
  readonly mode: 'reject' | 'wait';
  /** In `'wait'` mode, the longest a call may wait for its token (`Infinity`: no cap). */
  readonly maxWaitMs: number;
  readonly clock: Clock;
}

/** Makes the store of one rate limiter. */
export type RateLimiterStoreFactory = (options: RateLimiterStoreOptions) => RateLimiterStore;

/**
 * Where a rate limiter's tokens live. The in-memory store (the default) keeps them in this process; a shared store
 * (Redis, say) keeps them where every process takes from the same bucket.
 */
export interface RateLimiterStore {
  /**
   * Takes one token for a call. In `'reject'` mode: `true`, or a refusal when none is left. In `'wait'` mode, a call
   * that finds none waits its turn and the answer is `true` once it has its token; a call that would wait longer than
   * `maxWaitMs` is refused at once. When `context` aborts during the wait the promise rejects with the signal's
   * reason (the turn is given up). May answer synchronously (the in-memory store does, when it need not wait), so
   * that a call that finds a token costs no microtask.
   */
  acquire(context: PolicyContext): MaybePromise<RateLimiterGrant>;
  /**
   * Gives back a token that `acquire` handed over after a wait, when the call's signal aborted before the call could
   * start: the next caller need not wait for it.
   */
  release(): MaybePromise<void>;
  /** Tokens available now (fractional while refilling); a shared store answers from what it last saw. */
  readonly tokens: number;
  /** Calls of this process waiting for a token now. */
  readonly queued: number;
}
