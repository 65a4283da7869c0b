import { type Clock, systemClock } from './clock.js';
import { EventEmitter } from './events.js';
import type { Event } from './policy.js';
import {
  invalidOption,
  rejectUnknownOptions,
  requireClock,
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

/** Why a budget refused a retry. */
export type RetryBudgetDenial = 'max_retries' | 'ratio';

/** Emitted when a budget refuses a retry. */
export interface RetryBudgetDeniedEvent {
  readonly reason: RetryBudgetDenial;
  readonly snapshot: RetryBudgetSnapshot;
}

/**
 * One pool of retries shared by every layer that retries (retry policies, the agent loop), so that nested retry
 * layers never multiply. Implement it over shared storage to share a budget across processes.
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

// The window is kept as ten slots, each counting the requests and retries of a tenth of it: O(1) to record, O(10) to
// sum, and counts leave the window a tenth at a time rather than all at once.
const SLOTS = 10;
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

// The slots of a budget whose rate limit is off: never read.
const NO_SLOTS: number[] = [];

function budgetOf(settings: Settings): RetryBudget {
  const { maxRetries, ratio, windowMs, clock } = settings;
  const reserve = (settings.minRetriesPerSecond * windowMs) / 1000;
  const slotMs = windowMs / SLOTS;
  // A plain count (ratio: false, the agent's per-run budget) needs no window.
  const windowed = ratio !== false;
  const slotIds = windowed ? new Array<number>(SLOTS).fill(Number.NEGATIVE_INFINITY) : NO_SLOTS;
  const requests = windowed ? new Array<number>(SLOTS).fill(0) : NO_SLOTS;
  const retries = windowed ? new Array<number>(SLOTS).fill(0) : NO_SLOTS;
  const acquired = new EventEmitter<RetryBudgetSnapshot>();
  const denied = new EventEmitter<RetryBudgetDeniedEvent>();
  let spent = settings.initialSpent;

  /** The index of the current slot, emptied first if it last held an older tenth of time. */
  const currentSlot = (): number => {
    const slotId = Math.floor(clock.now() / slotMs);
    const index = ((slotId % SLOTS) + SLOTS) % SLOTS;
    if (slotIds[index] !== slotId) {
      slotIds[index] = slotId;
      requests[index] = 0;
      retries[index] = 0;
    }
    return index;
  };

  const windowCounts = (): { requests: number; retries: number } => {
    const newest = slotIds[currentSlot()]!;
    let requestSum = 0;
    let retrySum = 0;
    for (let index = 0; index < SLOTS; index++) {
      if (slotIds[index]! > newest - SLOTS) {
        requestSum += requests[index]!;
        retrySum += retries[index]!;
      }
    }
    return { requests: requestSum, retries: retrySum };
  };

  const snapshot = (): RetryBudgetSnapshot => {
    const lifetimeLeft = maxRetries - spent;
    if (ratio === false) return { spent, remaining: lifetimeLeft, requestsInWindow: 0, retriesInWindow: 0 };
    const counts = windowCounts();
    const rateLeft = Math.max(0, Math.floor(ratio * counts.requests + reserve - counts.retries + EPSILON));
    return {
      spent,
      remaining: Math.min(lifetimeLeft, rateLeft),
      requestsInWindow: counts.requests,
      retriesInWindow: counts.retries,
    };
  };

  const deny = (reason: RetryBudgetDenial): false => {
    if (denied.hasListeners) denied.emit({ reason, snapshot: snapshot() });
    return false;
  };

  return {
    recordRequest(): void {
      if (ratio === false) return;
      requests[currentSlot()]! += 1;
    },
    tryAcquireRetry(): boolean {
      if (spent >= maxRetries) return deny('max_retries');
      if (ratio !== false) {
        const counts = windowCounts();
        if (counts.retries + 1 > ratio * counts.requests + reserve + EPSILON) return deny('ratio');
        retries[currentSlot()]! += 1;
      }
      spent += 1;
      if (acquired.hasListeners) acquired.emit(snapshot());
      return true;
    },
    releaseRetry(): void {
      if (spent <= 0) return;
      spent -= 1;
      if (ratio === false) return;
      // The newest slot in the window that counted a retry: where this one was counted, unless the window moved on.
      const newest = slotIds[currentSlot()]!;
      let slot = -1;
      for (let index = 0; index < SLOTS; index++) {
        const id = slotIds[index]!;
        if (id > newest - SLOTS && retries[index]! > 0 && (slot === -1 || id > slotIds[slot]!)) slot = index;
      }
      if (slot !== -1) retries[slot]! -= 1;
    },
    snapshot,
    onRetryAcquired: acquired.event,
    onRetryDenied: denied.event,
  };
}

interface Settings {
  maxRetries: number;
  ratio: number | false;
  minRetriesPerSecond: number;
  windowMs: number;
  initialSpent: number;
  clock: Clock;
}

const FACTORY = 'retryBudget';

const KNOWN_OPTIONS = ['maxRetries', 'ratio', 'minRetriesPerSecond', 'windowMs', 'initialSpent', 'clock'];

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
    throw invalidOption(
      FACTORY,
      'ratio',
      'with ratio: false, set maxRetries: a budget with neither limit would allow every retry',
    );
  }
  return {
    maxRetries,
    ratio,
    minRetriesPerSecond: requireNonNegativeNumber(
      options.minRetriesPerSecond ?? 1,
      'minRetriesPerSecond',
      FACTORY,
      { finite: true },
    ),
    // One millisecond per slot at least, so that a slot is never shorter than the clock's resolution.
    windowMs: requireNonNegativeNumber(options.windowMs ?? 10_000, 'windowMs', FACTORY, {
      minimum: SLOTS,
      finite: true,
    }),
    initialSpent: requireNonNegativeInteger(options.initialSpent ?? 0, 'initialSpent', FACTORY),
    clock: requireClock(options.clock ?? systemClock, FACTORY),
  };
}
