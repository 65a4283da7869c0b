import type { ModelProvider, Usage } from '../spec/model.js';
import { costOfUsage } from './cost.js';
import { type PriceTable, priceOf } from './prices.js';

/**
 * What a run's model calls cost, in the run's report (kept in its state, so a resumed run keeps counting). Absent in
 * the report until the first answered call (and in states saved by an older keel).
 */
export interface RunCost {
  /** US dollars over every answered call of the run, retries, fallbacks and continuations included. */
  totalUsd: number;
  /** US dollars by `provider/model`. */
  byModel: Record<string, number>;
  /** Answered calls of models the price table has no price for: they count 0 above. */
  unpricedCalls: number;
}

/**
 * Adds one answered call to `report.cost` and returns its cost in US dollars, or undefined when the model has no price
 * in `prices` (counted in `unpricedCalls`).
 */
export function chargeCall(
  report: { cost?: RunCost },
  prices: PriceTable,
  key: string,
  provider: Pick<ModelProvider, 'provider' | 'model'>,
  usage: Usage,
): number | undefined {
  report.cost ??= { totalUsd: 0, byModel: {}, unpricedCalls: 0 };
  const cost = report.cost;
  const price = priceOf(prices, provider.provider, provider.model);
  if (price === undefined) {
    cost.unpricedCalls++;
    return undefined;
  }
  const usd = costOfUsage(usage, price);
  cost.totalUsd += usd;
  cost.byModel[key] = (cost.byModel[key] ?? 0) + usd;
  return usd;
}
