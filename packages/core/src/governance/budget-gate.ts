import { KeelError } from '../errors/keel-error.js';
import type { ModelProvider, Usage } from '../spec/model.js';
import type { ResolvedBudgets, ResolvedLimit } from './budget-options.js';
import type { BudgetAdjustment, BudgetCounter, BudgetReservation } from './budget-store.js';
import { costOfUsage, worstCaseCost } from './cost.js';
import { type ModelPrice, type PriceTable, priceOf } from './prices.js';

/** Who a call spends for: the run, its session and tenant, and what the run has spent so far. */
export interface BudgetPayer {
  readonly runId: string;
  readonly sessionId: string | undefined;
  readonly tenant: string | undefined;
  /** Tokens (input plus output) the run has spent so far. */
  readonly runTokens: number;
  /** US dollars the run has spent so far. */
  readonly runCostUsd: number;
}

/** One call about to be sent. */
export interface BudgetedCall {
  readonly provider: Pick<ModelProvider, 'provider' | 'model'>;
  /** Estimated input tokens (`estimatePromptTokens`). */
  readonly promptTokens: number;
  /** The call's own output limit; undefined uses `defaultOutputTokens`. */
  readonly maxOutputTokens: number | undefined;
  readonly nowMs: number;
}

/** A call's reservation: the output limit to send it with, and the settlement once its spend is known. */
export interface CallReservation {
  /** The `maxOutputTokens` the call must be sent with for the reservation to hold. */
  readonly maxOutputTokens: number;
  /** Whether rule 1 shrank the call's output limit to fit. */
  readonly shrunk: boolean;
  /** Settles the actual spend (`usage` of the answer; undefined when no answer came: nothing spent). Never rejects. */
  settle(usage: Usage | undefined): Promise<void>;
}

/** The tenant of runs that name none. */
export const DEFAULT_TENANT = 'default';

/** The unit of a budget's counter. */
type Unit = 'tokens' | 'cost';

interface Line {
  readonly limit: ResolvedLimit;
  readonly unit: Unit;
  readonly counterLimit: number;
  readonly key: string;
  readonly ttlMs: number;
}

/**
 * Reserves a call's worst case in every budget that applies (see `BudgetOptions` for the rule when it cannot), or
 * throws: `policy.budget_exhausted` naming the budget; `store.unavailable` (retryable) when the store cannot answer
 * under the rule `closed`; `config.invalid` when a cost budget applies to a model without a price.
 */
export async function reserveCall(
  budgets: ResolvedBudgets,
  prices: PriceTable,
  payer: BudgetPayer,
  call: BudgetedCall,
): Promise<CallReservation> {
  const lines = linesOf(budgets, payer, call.nowMs);
  const price = priceOf(prices, call.provider.provider, call.provider.model);
  if (price === undefined && lines.some((line) => line.unit === 'cost')) {
    throw new KeelError(
      'config.invalid',
      `${call.provider.provider}/${call.provider.model} has no price, and a cost budget applies to it`,
      {
        data: { where: 'agent', option: 'prices', path: ['prices', call.provider.model] },
        guidance: `Add the model to the agent's prices ({ '${call.provider.model}': { inputUsdPerMillion, outputUsdPerMillion } }).`,
      },
    );
  }
  let output = call.maxOutputTokens ?? budgets.defaultOutputTokens;
  let shrunk = false;
  for (;;) {
    const amounts = (unit: Unit): number =>
      unit === 'tokens'
        ? call.promptTokens + output
        : Math.ceil(worstCaseCost(call.promptTokens, output, price as ModelPrice) * 1_000_000);
    // The run's own budgets: a run has one call in flight, and its spend is in its state.
    let refusal: { line: Line; used: number } | undefined;
    for (const line of lines) {
      if (line.limit.scope !== 'run') continue;
      const used = line.unit === 'tokens' ? payer.runTokens : Math.ceil(payer.runCostUsd * 1_000_000);
      if (used + amounts(line.unit) > line.counterLimit) {
        refusal = { line, used };
        break;
      }
    }
    const shared = lines.filter((line) => line.limit.scope !== 'run');
    const counters: BudgetCounter[] = shared.map((line) => ({
      key: line.key,
      limit: line.counterLimit,
      amount: amounts(line.unit),
      ttlMs: line.ttlMs,
    }));
    if (refusal === undefined) {
      const answer = counters.length === 0 ? GRANTED : await reserveIn(budgets, counters);
      if (answer === undefined) return unreserved(output);
      if (answer.granted) return reservation(budgets, shared, counters, price, output, shrunk);
      refusal = { line: shared[answer.index]!, used: answer.used };
    }
    const room = roomFor(refusal.line, refusal.used, call.promptTokens, price);
    if (room >= budgets.minOutputTokens && room < output) {
      output = room;
      shrunk = true;
      continue;
    }
    throw exhausted(refusal.line, refusal.used, amounts(refusal.line.unit), payer);
  }
}

const GRANTED: BudgetReservation = { granted: true };

/** The counters of every budget that applies to the payer, for the period `nowMs` falls in. */
function linesOf(budgets: ResolvedBudgets, payer: BudgetPayer, nowMs: number): Line[] {
  const lines: Line[] = [];
  for (const limit of budgets.limits) {
    const scopeId =
      limit.scope === 'run'
        ? payer.runId
        : limit.scope === 'session'
          ? payer.sessionId
          : limit.scope === 'tenant'
            ? (payer.tenant ?? DEFAULT_TENANT)
            : '*';
    if (scopeId === undefined) continue;
    const period = limit.periodMs > 0 ? Math.floor(nowMs / limit.periodMs) : 'all';
    // A period's counter outlives its period by an hour, for clocks a little apart; one that never renews is kept.
    const ttlMs = limit.periodMs > 0 ? (Number(period) + 1) * limit.periodMs - nowMs + 3_600_000 : 0;
    const base = `${limit.name}:${limit.scope}:${scopeId}:${period}`;
    if (limit.maxTokens !== undefined) {
      lines.push({ limit, unit: 'tokens', counterLimit: limit.maxTokens, key: `${base}:tokens`, ttlMs });
    }
    if (limit.maxCostMicroUsd !== undefined) {
      lines.push({ limit, unit: 'cost', counterLimit: limit.maxCostMicroUsd, key: `${base}:cost`, ttlMs });
    }
  }
  return lines;
}

/** The store's answer, or undefined to send the call unreserved (rule `open`). */
async function reserveIn(
  budgets: ResolvedBudgets,
  counters: BudgetCounter[],
): Promise<BudgetReservation | undefined> {
  try {
    return await budgets.store.reserve(counters);
  } catch (error) {
    if (budgets.onStoreUnavailable === 'open') return undefined;
    throw new KeelError(
      'store.unavailable',
      'The budget store cannot be reached: the model call was not sent',
      {
        cause: error,
        data: { budgetStore: true },
        guidance:
          "Budgets fail closed: calls wait for the budget store (Redis) to return. Set budgets.onStoreUnavailable: 'open' to send calls unreserved meanwhile.",
      },
    );
  }
}

/** The output tokens that fit in what a refusing counter has left, once the prompt is paid for. */
function roomFor(line: Line, used: number, promptTokens: number, price: ModelPrice | undefined): number {
  const left = line.counterLimit - used;
  if (line.unit === 'tokens') return left - promptTokens;
  const perToken = worstCaseCost(0, 1, price as ModelPrice) * 1_000_000;
  const promptCost = Math.ceil(worstCaseCost(promptTokens, 0, price as ModelPrice) * 1_000_000);
  return perToken <= 0 ? Number.POSITIVE_INFINITY : Math.floor((left - promptCost) / perToken);
}

function exhausted(line: Line, used: number, requested: number, payer: BudgetPayer): KeelError {
  const { name, scope } = line.limit;
  const toUnit = (value: number) => (line.unit === 'tokens' ? value : value / 1_000_000);
  const what = line.unit === 'tokens' ? 'tokens' : 'US dollars';
  const scopeId =
    scope === 'run'
      ? payer.runId
      : scope === 'session'
        ? payer.sessionId
        : scope === 'tenant'
          ? (payer.tenant ?? DEFAULT_TENANT)
          : '*';
  return new KeelError(
    'policy.budget_exhausted',
    `Budget "${name}" (${scope}${scope === 'global' ? '' : ` ${scopeId}`}) has ${toUnit(line.counterLimit - used)} ${what} left of ${toUnit(line.counterLimit)}; the next model call needs up to ${toUnit(requested)}: it was not sent`,
    {
      data: {
        budget: name,
        scope,
        scopeId: scopeId ?? '',
        unit: line.unit === 'tokens' ? 'tokens' : 'usd',
        limit: toUnit(line.counterLimit),
        used: toUnit(used),
        requested: toUnit(requested),
      },
      guidance: `Raise the budget "${name}" (budgets.limits), wait for its period to renew, or lower maxOutputTokens and shorten the conversation so calls need less.`,
    },
  );
}

function unreserved(output: number): CallReservation {
  return { maxOutputTokens: output, shrunk: false, settle: async () => undefined };
}

function reservation(
  budgets: ResolvedBudgets,
  shared: readonly Line[],
  counters: readonly BudgetCounter[],
  price: ModelPrice | undefined,
  output: number,
  shrunk: boolean,
): CallReservation {
  let settled = false;
  return {
    maxOutputTokens: output,
    shrunk,
    async settle(usage) {
      if (settled || counters.length === 0) return;
      settled = true;
      const tokens = usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
      const cost =
        usage === undefined || price === undefined ? 0 : Math.ceil(costOfUsage(usage, price) * 1_000_000);
      const adjustments: BudgetAdjustment[] = counters.map((counter, index) => ({
        key: counter.key,
        delta: (shared[index]!.unit === 'tokens' ? tokens : cost) - counter.amount,
        ttlMs: counter.ttlMs,
      }));
      try {
        await budgets.store.settle(adjustments);
      } catch {
        // The reservation stays taken (the worst case): a budget never shows less spent than it was.
      }
    },
  };
}
