import type { BudgetAdjustment, BudgetCounter, BudgetReservation, BudgetStore } from '@keel/core/store';
import type { SharedConnection } from '../shared-connection.js';

/**
 * Budget counters in Redis, shared by every process of a fleet: `reserve` and `settle` are one script call each (one
 * round trip), atomic across all the counters of a call. While Redis cannot be reached every operation rejects with
 * `store.unavailable` at once, and the agent follows its `budgets.onStoreUnavailable` rule (`closed` by default: no
 * call is sent unreserved). Nothing is kept locally: once Redis answers again, calls are reserved there again.
 */
export class RedisBudgetStore implements BudgetStore {
  constructor(private readonly connection: SharedConnection) {}

  async reserve(counters: readonly BudgetCounter[]): Promise<BudgetReservation> {
    const args = ['reserve'];
    for (const counter of counters)
      args.push(String(counter.limit), String(counter.amount), String(counter.ttlMs));
    const answer = (await this.call(counters, args)) as number[];
    if (answer[0] === 1) return { granted: true };
    return { granted: false, index: Number(answer[1]), used: Number(answer[2]) };
  }

  async settle(adjustments: readonly BudgetAdjustment[]): Promise<void> {
    const args = ['settle'];
    for (const adjustment of adjustments)
      args.push(String(Math.round(adjustment.delta)), String(adjustment.ttlMs), '');
    await this.call(adjustments, args);
  }

  async read(keys: readonly string[]): Promise<readonly number[]> {
    const answer = (await this.call(
      keys.map((key) => ({ key })),
      ['read'],
    )) as number[];
    return answer.map(Number);
  }

  private call(entries: readonly { key: string }[], args: string[]): Promise<unknown> {
    if (!this.connection.available) return Promise.reject(this.connection.unavailableError());
    const keys = entries.map((entry) => this.connection.key('budget', entry.key));
    return this.connection.runKeys('budget', keys, args);
  }
}
