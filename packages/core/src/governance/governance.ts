import { optionError } from '../options/option-error.js';
import type { Clock } from '../policies/clock.js';
import { type BudgetOptions, type ResolvedBudgets, resolveBudgets } from './budget-options.js';
import { PaceGovernor } from './pace-governor.js';
import { type PriceTable, priceTable } from './prices.js';

/** What an agent's runs need for cost and budgets: its price table and budgets, resolved once. */
export interface Governance {
  readonly prices: PriceTable;
  /** Undefined when the agent has no budgets: calls are sent without reservation. */
  readonly budgets: ResolvedBudgets | undefined;
  /** Set with the agent's `pace: true`: spaces its calls by what providers say of their limits. */
  readonly governor: PaceGovernor | undefined;
  readonly clock: Clock;
}

/** Checks the agent's `prices` and `budgets`; a bad one throws `config.invalid`. */
export function resolveGovernance(
  prices: PriceTable | undefined,
  budgets: BudgetOptions | undefined,
  clock: Clock,
  pace?: boolean,
): Governance {
  if (pace !== undefined && typeof pace !== 'boolean') {
    throw optionError({
      where: 'agent',
      option: 'pace',
      message: `pace must be true or false; got ${String(pace)}`,
    });
  }
  return {
    prices: priceTable(prices),
    budgets: resolveBudgets(budgets),
    governor: pace === true ? new PaceGovernor() : undefined,
    clock,
  };
}
