import type { RetryBudgetDenial } from './retry-budget.js';
import type {
  RetryBudgetCounts,
  RetryBudgetLimits,
  RetryBudgetStore,
  RetryBudgetStoreFactory,
  RetryBudgetStoreOptions,
} from './retry-budget-store.js';

/**
 * The window is kept as ten slots, each counting the requests and retries of a tenth of it: O(1) to record, O(10) to
 * sum, and counts leave the window a tenth at a time rather than all at once. A shared store keeps the same slots.
 */
export const RETRY_BUDGET_SLOTS = 10;
// Tolerates float error in `ratio × requests` (0.1 × 3 is 0.30000000000000004).
const EPSILON = 1e-9;
// The slots of a budget whose rate limit is off: never read.
const NO_SLOTS: number[] = [];

/**
 * The default retry budget store: counts in this process.
 *
 * @example
 *   retryBudget({ ratio: 0.2, store: memoryRetryBudgetStore });
 */
export const memoryRetryBudgetStore: RetryBudgetStoreFactory = (options) =>
  new InMemoryRetryBudgetStore(options);

class InMemoryRetryBudgetStore implements RetryBudgetStore {
  private readonly limits: RetryBudgetLimits;
  private readonly clock: RetryBudgetStoreOptions['clock'];
  private readonly slotMs: number;
  private readonly slotIds: number[];
  private readonly requests: number[];
  private readonly retries: number[];
  private spent: number;

  constructor(options: RetryBudgetStoreOptions) {
    this.limits = options.limits;
    this.clock = options.clock;
    this.spent = options.initialSpent;
    this.slotMs = options.limits.windowMs / RETRY_BUDGET_SLOTS;
    // A plain count (ratio: false, the agent's per-run budget) needs no window.
    const windowed = options.limits.ratio !== false;
    this.slotIds = windowed ? new Array<number>(RETRY_BUDGET_SLOTS).fill(Number.NEGATIVE_INFINITY) : NO_SLOTS;
    this.requests = windowed ? new Array<number>(RETRY_BUDGET_SLOTS).fill(0) : NO_SLOTS;
    this.retries = windowed ? new Array<number>(RETRY_BUDGET_SLOTS).fill(0) : NO_SLOTS;
  }

  recordRequest(): void {
    if (this.limits.ratio === false) return;
    this.requests[this.currentSlot()]! += 1;
  }

  tryAcquireRetry(): 'granted' | RetryBudgetDenial {
    const { maxRetries, ratio, reserve } = this.limits;
    if (this.spent >= maxRetries) return 'max_retries';
    if (ratio !== false) {
      const counts = this.windowCounts();
      if (counts.retries + 1 > ratio * counts.requests + reserve + EPSILON) return 'ratio';
      this.retries[this.currentSlot()]! += 1;
    }
    this.spent += 1;
    return 'granted';
  }

  releaseRetry(): void {
    if (this.spent <= 0) return;
    this.spent -= 1;
    if (this.limits.ratio === false) return;
    // The newest slot in the window that counted a retry: where this one was counted, unless the window moved on.
    const newest = this.slotIds[this.currentSlot()]!;
    let slot = -1;
    for (let index = 0; index < RETRY_BUDGET_SLOTS; index++) {
      const id = this.slotIds[index]!;
      if (
        id > newest - RETRY_BUDGET_SLOTS &&
        this.retries[index]! > 0 &&
        (slot === -1 || id > this.slotIds[slot]!)
      )
        slot = index;
    }
    if (slot !== -1) this.retries[slot]! -= 1;
  }

  counts(): RetryBudgetCounts {
    if (this.limits.ratio === false) return { spent: this.spent, requestsInWindow: 0, retriesInWindow: 0 };
    const counts = this.windowCounts();
    return { spent: this.spent, requestsInWindow: counts.requests, retriesInWindow: counts.retries };
  }

  /** The index of the current slot, emptied first if it last held an older tenth of time. */
  private currentSlot(): number {
    const slotId = Math.floor(this.clock.now() / this.slotMs);
    const index = ((slotId % RETRY_BUDGET_SLOTS) + RETRY_BUDGET_SLOTS) % RETRY_BUDGET_SLOTS;
    if (this.slotIds[index] !== slotId) {
      this.slotIds[index] = slotId;
      this.requests[index] = 0;
      this.retries[index] = 0;
    }
    return index;
  }

  private windowCounts(): { requests: number; retries: number } {
    const newest = this.slotIds[this.currentSlot()]!;
    let requests = 0;
    let retries = 0;
    for (let index = 0; index < RETRY_BUDGET_SLOTS; index++) {
      if (this.slotIds[index]! > newest - RETRY_BUDGET_SLOTS) {
        requests += this.requests[index]!;
        retries += this.retries[index]!;
      }
    }
    return { requests, retries };
  }
}
