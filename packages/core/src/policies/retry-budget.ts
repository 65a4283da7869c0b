import { optionError } from '../options/option-error.js';
import { type Clock, systemClock } from './clock.js';
import { Emitter } from './events.js';
import { memoryRetryBudgetStore, RETRY_BUDGET_SLOTS } from './in-memory-retry-budget-store.js';
import type { Event } from './policy.js';
import type { RetryBudgetLimits, RetryBudgetStoreFactory } from './retry-budget-store.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireFunction,
  requireNonNegativeInteger,
  requireNonNegativeNumber,
  requireOptionsObject,
} from './validate.js';

/** Options of {@link retryBudget}. */
export interface RetryBudgetOptions {
  /**
   * Most retries over the budget's whole life (one run, say), whatever the traffic. Defaults to no lifetime cap.
   */
  maxRetries?: number;
  /**
   * Retries allowed per request recorded within the last `windowMs` (0.2: one retry per five requests), on top of the
   * `minRetriesPerSecond` reserve. `false` turns this rate limit off, leaving only `maxRetries`. Defaults to 0.2.
   */
  ratio?: number | false;
  /**
   * A reserve of retries that low traffic may always use: `minRetriesPerSecond × windowMs / 1000` per window.
   * Defaults to 1 (10 retries per default window).
   */
  minRetriesPerSecond?: number;
  /** How long a recorded request or retry counts toward the rate limit. Defaults to 10_000. */
  windowMs?: number;
  /** Retries already spent, for a budget restored from a snapshot (a resumed run). Defaults to 0. */
  initialSpent?: number;
  /**
   * Where the counts live. Defaults to `memoryRetryBudgetStore`, counts in this process; a shared store (such as
   * `@keel/redis`) makes every process draw from one budget.
   */
  store?: RetryBudgetStoreFactory;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
}

/** A budget's state at one moment. */
export interface RetryBudgetSnapshot {
  /** Retries granted over the budget's whole life. */
  readonly spent: number;
  /** Retries that would be granted now, if nothing else were recorded. */
  readonly remaining: number;
  /** Requests recorded within the window (0 when the rate limit is off). */
  readonly requestsInWindow: number;
  /** Retries granted within the window (0 when the rate limit is off). */
  readonly retriesInWindow: number;
}

/**
 * Why a budget refused a retry: `max_retries`, the lifetime cap; `ratio`, the rate limit; `unavailable`, a shared
 * store that cannot be reached and whose rule is to refuse (see `@keel/redis`).
 */
export type RetryBudgetDenial = 'max_retries' | 'ratio' | 'unavailable';

/** Emitted when a budget refuses a retry. */
export interface RetryBudgetDeniedEvent {
  readonly reason: RetryBudgetDenial;
  readonly snapshot: RetryBudgetSnapshot;
}

/**
 * One pool of retries shared by every layer that retries (retry policies, the agent loop), so that nested retry
 * layers never multiply. To share one budget across processes, give `retryBudget` a shared `store`.
 */
export interface RetryBudget {
  /** Counts one original request (not a retry): it earns `ratio` retries for the next window. */
  recordRequest(): void;
  /** Takes one retry from the budget: `true` when granted, `false` when spent (nothing is taken then). */
  tryAcquireRetry(): boolean;
  /**
   * Gives back one retry granted by `tryAcquireRetry` that never ran (its caller cancelled during the wait before
   * it). Optional: a budget without it keeps such retries spent.
   */
  releaseRetry?(): void;
  snapshot(): RetryBudgetSnapshot;
  /** Fires for every retry granted. */
  readonly onRetryAcquired: Event<RetryBudgetSnapshot>;
  /** Fires for every retry refused. */
  readonly onRetryDenied: Event<RetryBudgetDeniedEvent>;
}

// Tolerates float error in `ratio × requests` (0.1 × 3 is 0.30000000000000004).
const EPSILON = 1e-9;

/**
 * A retry budget in the style of Finagle's and gRPC's: retries are allowed at a ratio of recent requests plus a small
 * per-second reserve, and optionally capped over the budget's life. Two limits, each applied when set:
 *
 * - rate: within the last `windowMs`, retries granted ≤ `ratio × requests recorded + minRetriesPerSecond × windowMs
 *   / 1000`. Earned retries expire with the window, so a long quiet spell cannot bank a retry storm.
 * - lifetime: retries granted ≤ `maxRetries`, for a budget that belongs to one run.
 *
 * @example
 *   const budget = retryBudget({ maxRetries: 20 });            // rate limit at defaults, at most 20 retries in all
 *   const model = retry({ budget });
 *   const tools = retry({ budget, maxAttempts: 2 });           // both draw from the same 20
 *   const perRun = retryBudget({ maxRetries: 8, ratio: false }); // a plain count: exactly 8 retries
 */
export function retryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  return budgetOf(validate(options));
}

/**
 * Checks `options` once (as {@link retryBudget} does) and returns a maker of fresh budgets with them, made without
 * checking again: for a caller that makes one budget per run, say.
 */
export function retryBudgetMaker(options: RetryBudgetOptions = {}): () => RetryBudget {
  const settings = validate(options);
  return () => budgetOf(settings);
}

function budgetOf({ limits, initialSpent, clock, store: createStore }: Settings): RetryBudget {
  const store = createStore({ limits, initialSpent, clock });
  const acquired = new Emitter<RetryBudgetSnapshot>();
  const denied = new Emitter<RetryBudgetDeniedEvent>();

  const snapshot = (): RetryBudgetSnapshot => {
    const counts = store.counts();
    const lifetimeLeft = limits.maxRetries - counts.spent;
    if (limits.ratio === false) {
      return { spent: counts.spent, remaining: lifetimeLeft, requestsInWindow: 0, retriesInWindow: 0 };
    }
    const rateLeft = Math.max(
      0,
      Math.floor(limits.ratio * counts.requestsInWindow + limits.reserve - counts.retriesInWindow + EPSILON),
    );
    return { ...counts, remaining: Math.min(lifetimeLeft, rateLeft) };
  };

  return {
    recordRequest(): void {
      store.recordRequest();
    },
    tryAcquireRetry(): boolean {
      const answer = store.tryAcquireRetry();
      if (answer !== 'granted') {
        if (denied.hasListeners) denied.emit({ reason: answer, snapshot: snapshot() });
        return false;
      }
      if (acquired.hasListeners) acquired.emit(snapshot());
      return true;
    },
    releaseRetry(): void {
      store.releaseRetry();
    },
    snapshot,
    onRetryAcquired: acquired.event,
    onRetryDenied: denied.event,
  };
}

interface Settings {
  limits: RetryBudgetLimits;
  initialSpent: number;
  store: RetryBudgetStoreFactory;
  clock: Clock;
}

const FACTORY = 'retryBudget';

const KNOWN_OPTIONS = [
  'maxRetries',
  'ratio',
  'minRetriesPerSecond',
  'windowMs',
  'initialSpent',
  'store',
  'clock',
];

function validate(options: RetryBudgetOptions): Settings {
  requireOptionsObject(options, FACTORY, '{ maxRetries: 20 }');
  rejectUnknownOptions(options, KNOWN_OPTIONS, FACTORY);
  const maxRetries = requireNonNegativeInteger(
    options.maxRetries ?? Number.POSITIVE_INFINITY,
    'maxRetries',
    FACTORY,
    { allowInfinity: true },
  );
  const ratio = options.ratio ?? 0.2;
  if (ratio !== false) requireNonNegativeNumber(ratio, 'ratio', FACTORY, { finite: true });
  if (ratio === false && maxRetries === Number.POSITIVE_INFINITY) {
    throw optionError({
      where: FACTORY,
      option: 'ratio',
      message: 'with ratio: false, set maxRetries: a budget with neither limit would allow every retry',
    });
  }
  const minRetriesPerSecond = requireNonNegativeNumber(
    options.minRetriesPerSecond ?? 1,
    'minRetriesPerSecond',
    FACTORY,
    { finite: true },
  );
  // One millisecond per slot at least, so that a slot is never shorter than the clock's resolution.
  const windowMs = requireNonNegativeNumber(options.windowMs ?? 10_000, 'windowMs', FACTORY, {
    minimum: RETRY_BUDGET_SLOTS,
    finite: true,
  });
  return {
    limits: { maxRetries, ratio, reserve: (minRetriesPerSecond * windowMs) / 1000, windowMs },
    initialSpent: requireNonNegativeInteger(options.initialSpent ?? 0, 'initialSpent', FACTORY),
    store: requireFunction(
      options.store ?? memoryRetryBudgetStore,
      'store',
      FACTORY,
      '(options) => RetryBudgetStore, such as memoryRetryBudgetStore',
    ),
    clock: requireClock(options.clock ?? systemClock, FACTORY),
  };
}
