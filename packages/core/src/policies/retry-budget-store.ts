import type { Clock } from './clock.js';
import type { RetryBudgetDenial } from './retry-budget.js';

/** A retry budget's limits, validated by `retryBudget`. */
export interface RetryBudgetLimits {
  /** Most retries over the budget's life; `Infinity` for no cap. */
  readonly maxRetries: number;
  /** Retries earned per request recorded within the window; `false` when the rate limit is off. */
  readonly ratio: number | false;
  /** Retries the window allows whatever the traffic: `minRetriesPerSecond × windowMs / 1000`. */
  readonly reserve: number;
  /** How long a recorded request or retry counts, in milliseconds. */
  readonly windowMs: number;
}

/** What a store factory receives from the budget it serves. */
export interface RetryBudgetStoreOptions {
  readonly limits: RetryBudgetLimits;
  /** Retries already spent, for a budget restored from a snapshot. */
  readonly initialSpent: number;
  readonly clock: Clock;
}

/** Makes the store of one retry budget. */
export type RetryBudgetStoreFactory = (options: RetryBudgetStoreOptions) => RetryBudgetStore;

/** A budget's counts at one moment. */
export interface RetryBudgetCounts {
  /** Retries granted over the budget's whole life. */
  readonly spent: number;
  /** Requests recorded within the window (0 when the rate limit is off). */
  readonly requestsInWindow: number;
  /** Retries granted within the window (0 when the rate limit is off). */
  readonly retriesInWindow: number;
}

/**
 * Where a retry budget's counts live. Every operation is synchronous, as `RetryBudget` is (a retry is decided between
 * a failure and its backoff, on paths that do not await): a shared store answers from its own copy of the shared
 * counts and sends its changes on (see `@keel/redis`).
 */
export interface RetryBudgetStore {
  /** Counts one original request. */
  recordRequest(): void;
  /** Takes one retry when the limits allow it (`'granted'`), or names the limit that refused it (nothing is taken). */
  tryAcquireRetry(): 'granted' | RetryBudgetDenial;
  /** Gives back one granted retry that never ran. */
  releaseRetry(): void;
  counts(): RetryBudgetCounts;
}
