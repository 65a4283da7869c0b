import type { Usage } from '../spec/model.js';
import type { ModelPrice } from './prices.js';

/**
 * What `usage` cost at `price`, in US dollars. Cached and cache-written input tokens are part of `inputTokens` and
 * priced apart; reasoning tokens are part of `outputTokens` and priced apart. Counts that are missing or not finite
 * count as 0.
 */
export function costOfUsage(usage: Usage, price: ModelPrice): number {
  const input = finite(usage.inputTokens);
  const output = finite(usage.outputTokens);
  const cached = Math.min(finite(usage.cachedInputTokens), input);
  const written = Math.min(finite(usage.cacheWriteInputTokens), input - cached);
  const reasoning = Math.min(finite(usage.reasoningTokens), output);
  const micro =
    (input - cached - written) * price.inputUsdPerMillion +
    cached * (price.cachedInputUsdPerMillion ?? price.inputUsdPerMillion) +
    written * (price.cacheWriteInputUsdPerMillion ?? price.inputUsdPerMillion) +
    (output - reasoning) * price.outputUsdPerMillion +
    reasoning * (price.reasoningUsdPerMillion ?? price.outputUsdPerMillion);
  return micro / 1_000_000;
}

/**
 * The most a call may cost at `price`: `inputTokens` at the input price, `outputTokens` at the dearer of the output and
 * reasoning prices. What a budget reserves before the call.
 */
export function worstCaseCost(inputTokens: number, outputTokens: number, price: ModelPrice): number {
  const outputPrice = Math.max(price.outputUsdPerMillion, price.reasoningUsdPerMillion ?? 0);
  const inputPrice = Math.max(price.inputUsdPerMillion, price.cacheWriteInputUsdPerMillion ?? 0);
  return (inputTokens * inputPrice + outputTokens * outputPrice) / 1_000_000;
}

function finite(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}
