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
  /**
   * The later models of the run's chain (its fallbacks after the call's model), in chain order: rule 1 may send the
   * call to one of them instead. Defaults to none.
   */
  readonly fallbacks?: readonly Pick<ModelProvider, 'provider' | 'model'>[];
}

/** A call's reservation: the output limit to send it with, and the settlement once its spend is known. */
export interface CallReservation {
  /** The `maxOutputTokens` the call must be sent with for the reservation to hold. */
  readonly maxOutputTokens: number;
  /** Whether rule 2 shrank the call's output limit to fit. */
  readonly shrunk: boolean;
  /**
   * Set when rule 1 reserved the call on a cheaper fallback: its index in `BudgetedCall.fallbacks`. The call must be
   * sent to that model for the reservation to hold.
   */
  readonly fallbackIndex?: number;
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

/** A budget that refused a reservation, and what it had spent. */
interface Refusal {
  readonly line: Line;
  readonly used: number;
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
  const costed = lines.some((line) => line.unit === 'cost');
  if (price === undefined && costed) {
    throw new KeelError(
      'config.invalid',
      `${call.provider.provider}/${call.provider.model} has no price, and a cost budget applies to it`,
      {
        data: { where: 'agent', option: 'prices', path: ['prices', call.provider.model] },
        guidance: `Add the model to the agent's prices ({ '${call.provider.model}': { inputUsdPerMillion, outputUsdPerMillion } }).`,
      },
    );
  }
  const gate = { budgets, payer, lines, promptTokens: call.promptTokens };
  const output = call.maxOutputTokens ?? budgets.defaultOutputTokens;
  const first = await tryReserve(gate, price, output);
  if (!('refusal' in first)) return first;
  // Rule 1: a cheaper fallback that fits, the cheapest first. Only a cost budget can be helped by a cheaper model.
  if (budgets.cheaperFallbacks && first.refusal.line.unit === 'cost' && call.fallbacks !== undefined) {
    const worstCase = (candidate: ModelPrice) => worstCaseCost(call.promptTokens, output, candidate);
    const own = worstCase(price as ModelPrice);
    const cheaper = call.fallbacks
      .map((model, index) => ({ index, price: priceOf(prices, model.provider, model.model) }))
      .filter(
        (candidate): candidate is { index: number; price: ModelPrice } =>
          candidate.price !== undefined && worstCase(candidate.price) < own,
      )
      .sort((a, b) => worstCase(a.price) - worstCase(b.price) || a.index - b.index);
    for (const candidate of cheaper) {
      const answer = await tryReserve(gate, candidate.price, output);
      if (!('refusal' in answer)) return { ...answer, fallbackIndex: candidate.index };
    }
  }
  // Rule 2: a smaller output limit on the call's own model; then rule 3: the run ends.
  let refusal = first.refusal;
  let requested = output;
  for (;;) {
    const room = roomFor(refusal.line, refusal.used, call.promptTokens, price);
    if (!(room >= budgets.minOutputTokens && room < requested)) {
      throw exhausted(refusal.line, refusal.used, amountOf(refusal.line.unit, gate, price, requested), payer);
    }
    requested = room;
    const answer = await tryReserve(gate, price, requested);
    if (!('refusal' in answer)) return { ...answer, shrunk: true };
    refusal = answer.refusal;
  }
}

/** What `reserveCall` works from, the same for each model and output limit it tries. */
interface Gate {
  readonly budgets: ResolvedBudgets;
  readonly payer: BudgetPayer;
  readonly lines: readonly Line[];
  readonly promptTokens: number;
}

/** What a call costs a budget of `unit`, prompt and `output` tokens at `price`: tokens, or millionths of a dollar. */
function amountOf(unit: Unit, gate: Gate, price: ModelPrice | undefined, output: number): number {
  return unit === 'tokens'
    ? gate.promptTokens + output
    : Math.ceil(worstCaseCost(gate.promptTokens, output, price as ModelPrice) * 1_000_000);
}

/** Reserves the call at `price` and `output` in every budget, or says which budget refused it. */
async function tryReserve(
  gate: Gate,
  price: ModelPrice | undefined,
  output: number,
): Promise<CallReservation | { refusal: Refusal }> {
  const { budgets, payer, lines } = gate;
  // The run's own budgets: a run has one call in flight, and its spend is in its state.
  for (const line of lines) {
    if (line.limit.scope !== 'run') continue;
    const used = line.unit === 'tokens' ? payer.runTokens : Math.ceil(payer.runCostUsd * 1_000_000);
    if (used + amountOf(line.unit, gate, price, output) > line.counterLimit)
      return { refusal: { line, used } };
  }
  const shared = lines.filter((line) => line.limit.scope !== 'run');
  const counters: BudgetCounter[] = shared.map((line) => ({
    key: line.key,
    limit: line.counterLimit,
    amount: amountOf(line.unit, gate, price, output),
    ttlMs: line.ttlMs,
  }));
  const answer = counters.length === 0 ? GRANTED : await reserveIn(budgets, counters);
  if (answer === undefined) return unreserved(output);
  if (answer.granted) return reservation(budgets, shared, counters, price, output, false);
  return { refusal: { line: shared[answer.index]!, used: answer.used } };
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
