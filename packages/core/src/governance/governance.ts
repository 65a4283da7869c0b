import type { Clock } from '../policies/clock.js';
import { type BudgetOptions, type ResolvedBudgets, resolveBudgets } from './budget-options.js';
import { type PaceOptions, type ResolvedPace, resolvePace } from './pace-options.js';
import { type PriceTable, priceTable } from './prices.js';

/** What an agent's runs need for cost and budgets: its price table and budgets, resolved once. */
export interface Governance {
  readonly prices: PriceTable;
  /** Undefined when the agent has no budgets: calls are sent without reservation. */
  readonly budgets: ResolvedBudgets | undefined;
  /** Set with the agent's `pace`: spaces its calls by what providers say of their limits. */
  readonly governor: ResolvedPace | undefined;
  readonly clock: Clock;
}

/** Checks the agent's `prices`, `budgets` and `pace`; a bad one throws `config.invalid`. */
export function resolveGovernance(
  prices: PriceTable | undefined,
  budgets: BudgetOptions | undefined,
  clock: Clock,
  pace?: boolean | PaceOptions,
): Governance {
  return {
    prices: priceTable(prices),
    budgets: resolveBudgets(budgets),
    governor: resolvePace(pace),
    clock,
  };
}
