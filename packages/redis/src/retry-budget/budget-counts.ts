import { RETRY_BUDGET_SLOTS } from '@keel/core/store';

/** One operation on a budget's counts. */
export type BudgetOperation = 'request' | 'acquire' | 'release';

/** The script's answer: the counts as Redis holds them. */
export interface BudgetAnswer {
  readonly now: number;
  readonly spent: number;
  /** `[slotId, requests, retries]` for each slot inside the window (an empty list may come as `{}` from Lua). */
  readonly slots: ReadonlyArray<readonly [number, number, number]> | Record<string, never>;
}

/**
 * A copy of a shared budget's counts, kept as the script keeps them (ten slots of a tenth of the window each, by
 * slot id), so that this process can apply an operation to it at once and judge the next retry before Redis answers.
 */
export class BudgetCounts {
  spent: number;
  private readonly ids = new Array<number>(RETRY_BUDGET_SLOTS).fill(Number.NEGATIVE_INFINITY);
  private readonly requests = new Array<number>(RETRY_BUDGET_SLOTS).fill(0);
  private readonly retries = new Array<number>(RETRY_BUDGET_SLOTS).fill(0);

  constructor(
    spent: number,
    private readonly slotMs: number,
    private readonly windowed: boolean,
  ) {
    this.spent = spent;
  }

  /** Takes Redis's counts over. */
  load(answer: BudgetAnswer): void {
    this.spent = answer.spent;
    this.ids.fill(Number.NEGATIVE_INFINITY);
    this.requests.fill(0);
    this.retries.fill(0);
    if (!Array.isArray(answer.slots)) return;
    for (const [id, requests, retries] of answer.slots) {
      const index = id % RETRY_BUDGET_SLOTS;
      this.ids[index] = id;
      this.requests[index] = requests;
      this.retries[index] = retries;
    }
  }

  /** Applies one operation at `nowMs` (the scripts' clock), as the script will. */
  apply(operation: BudgetOperation, nowMs: number): void {
    const index = this.slot(nowMs);
    if (operation === 'request') this.requests[index]! += 1;
    else if (operation === 'acquire') {
      this.spent += 1;
      if (this.windowed) this.retries[index]! += 1;
    } else if (this.spent > 0) {
      this.spent -= 1;
      if (!this.windowed) return;
      const current = this.ids[index]!;
      let newest = -1;
      for (let slot = 0; slot < RETRY_BUDGET_SLOTS; slot++) {
        const id = this.ids[slot]!;
        if (
          id > current - RETRY_BUDGET_SLOTS &&
          this.retries[slot]! > 0 &&
          (newest === -1 || id > this.ids[newest]!)
        )
          newest = slot;
      }
      if (newest !== -1) this.retries[newest]! -= 1;
    }
  }

  /** Requests and retries within the window at `nowMs`. */
  window(nowMs: number): { requests: number; retries: number } {
    const current = this.ids[this.slot(nowMs)]!;
    let requests = 0;
    let retries = 0;
    for (let slot = 0; slot < RETRY_BUDGET_SLOTS; slot++) {
      if (this.ids[slot]! > current - RETRY_BUDGET_SLOTS) {
        requests += this.requests[slot]!;
        retries += this.retries[slot]!;
      }
    }
    return { requests, retries };
  }

  /** The current slot's index, emptied first when it still holds an older tenth of time. */
  private slot(nowMs: number): number {
    const id = Math.floor(nowMs / this.slotMs);
    const index = ((id % RETRY_BUDGET_SLOTS) + RETRY_BUDGET_SLOTS) % RETRY_BUDGET_SLOTS;
    if (this.ids[index] !== id) {
      this.ids[index] = id;
      this.requests[index] = 0;
      this.retries[index] = 0;
    }
    return index;
  }
}
