/**
 * One counter a reservation takes from: `amount` more is granted only when `used + amount <= limit`. Amounts are
 * integers: tokens, or millionths of a US dollar.
 */
export interface BudgetCounter {
  /** The counter's key, unique per budget, scope and period (`day-tokens:tenant:acme:20417:tokens`). */
  readonly key: string;
  readonly limit: number;
  readonly amount: number;
  /** How long the counter is kept after its last change, in milliseconds; 0 keeps it for good. */
  readonly ttlMs: number;
}

/** A change to a counter once a call's actual spend is known: `delta` is the actual less what was reserved. */
export interface BudgetAdjustment {
  readonly key: string;
  readonly delta: number;
  readonly ttlMs: number;
}

/**
 * A store's answer to a reservation: granted (every counter took its amount), or refused, naming the first counter
 * that had no room (`index` into the counters) and what it had used.
 */
export type BudgetReservation =
  | { readonly granted: true }
  | { readonly granted: false; readonly index: number; readonly used: number };

/**
 * Where budget counters live: in memory for one process (`memoryBudgetStore()`), in Redis for a fleet
 * (`@keel/redis`'s `budgetStore()`). Both operations are atomic: a reservation takes from all its counters or from
 * none, so two calls can never both take the last of a budget. A store that cannot answer rejects (`store.unavailable`);
 * the agent then follows its `budgets.onStoreUnavailable` rule.
 */
export interface BudgetStore {
  /** Takes each counter's amount, all or nothing. */
  reserve(counters: readonly BudgetCounter[]): BudgetReservation | Promise<BudgetReservation>;
  /** Adds each delta (negative gives back what a call did not spend). */
  settle(adjustments: readonly BudgetAdjustment[]): void | Promise<void>;
  /** The amounts used of `keys`, 0 for a counter never taken from. */
  read(keys: readonly string[]): readonly number[] | Promise<readonly number[]>;
}

/** Options of {@link memoryBudgetStore}. */
export interface MemoryBudgetStoreOptions {
  /** Where expiry time comes from (milliseconds). Defaults to `Date.now`. */
  now?: () => number;
}

/**
 * Budget counters in this process's memory: atomic because each operation runs to its end without yielding. Expired
 * counters are dropped when next touched.
 */
export function memoryBudgetStore(options: MemoryBudgetStoreOptions = {}): BudgetStore {
  const now = options.now ?? Date.now;
  const counters = new Map<string, { used: number; expiresAtMs: number }>();
  const current = (key: string): number => {
    const entry = counters.get(key);
    if (entry === undefined) return 0;
    if (entry.expiresAtMs <= now()) {
      counters.delete(key);
      return 0;
    }
    return entry.used;
  };
  const put = (key: string, used: number, ttlMs: number): void => {
    counters.set(key, { used, expiresAtMs: ttlMs > 0 ? now() + ttlMs : Number.POSITIVE_INFINITY });
  };
  return {
    reserve(requested) {
      for (let index = 0; index < requested.length; index++) {
        const counter = requested[index]!;
        const used = current(counter.key);
        if (used + counter.amount > counter.limit) return { granted: false, index, used };
      }
      for (const counter of requested) put(counter.key, current(counter.key) + counter.amount, counter.ttlMs);
      return { granted: true };
    },
    settle(adjustments) {
      for (const adjustment of adjustments) {
        put(adjustment.key, Math.max(0, current(adjustment.key) + adjustment.delta), adjustment.ttlMs);
      }
    },
    read(keys) {
      return keys.map(current);
    },
  };
}
