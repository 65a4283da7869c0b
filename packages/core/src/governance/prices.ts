import { optionError } from '../options/option-error.js';

/**
 * What a model's tokens cost, in US dollars per million tokens. Cached input is what a prompt cache read costs (OpenAI's
 * "cached input", Anthropic's "cache hits & refreshes"); cache writes are Anthropic's 5-minute "cache writes".
 * Reasoning tokens are output tokens on every provider's bill: `reasoningUsdPerMillion` defaults to the output price.
 */
export interface ModelPrice {
  /** Uncached input tokens. Required. */
  readonly inputUsdPerMillion: number;
  /** Output tokens, reasoning included unless `reasoningUsdPerMillion` is set. Required. */
  readonly outputUsdPerMillion: number;
  /** Input tokens read from the prompt cache. Defaults to `inputUsdPerMillion`. */
  readonly cachedInputUsdPerMillion?: number;
  /** Input tokens written to the prompt cache. Defaults to `inputUsdPerMillion`. */
  readonly cacheWriteInputUsdPerMillion?: number;
  /** Reasoning tokens (of the output). Defaults to `outputUsdPerMillion`. */
  readonly reasoningUsdPerMillion?: number;
}

/**
 * Prices by model: keyed by `provider/model` (`openai/gpt-4.1-mini`) or by model name alone (`gpt-4.1-mini`). A model
 * whose name is a key followed by `-` and more (a dated snapshot: `gpt-4.1-mini-2025-04-14`,
 * `claude-sonnet-4-5-20250929`) takes that key's price, the longest such key winning.
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * The date {@link DEFAULT_PRICES} were read from the providers' published price lists
 * (https://openai.com/api/pricing and https://platform.openai.com/docs/pricing for OpenAI,
 * https://docs.anthropic.com/en/docs/about-claude/pricing for Anthropic; standard tier, no batch discount).
 * Prices change: give the agent's `prices` option your own to override any of them.
 */
export const PRICES_AS_OF = '2025-10-15';

const price = (
  inputUsdPerMillion: number,
  outputUsdPerMillion: number,
  cachedInputUsdPerMillion: number,
  cacheWriteInputUsdPerMillion?: number,
): ModelPrice =>
  Object.freeze({
    inputUsdPerMillion,
    outputUsdPerMillion,
    cachedInputUsdPerMillion,
    ...(cacheWriteInputUsdPerMillion === undefined ? {} : { cacheWriteInputUsdPerMillion }),
  });

/**
 * keel's built-in prices (USD per million tokens; see {@link PRICES_AS_OF} for source and date). The simulated
 * provider's models (`simulated/...`) are priced as `gpt-4.1-mini`, so that the chaos suite's costs are realistic.
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  // OpenAI: input, output, cached input.
  'gpt-5': price(1.25, 10, 0.125),
  'gpt-5-mini': price(0.25, 2, 0.025),
  'gpt-5-nano': price(0.05, 0.4, 0.005),
  'gpt-4.1': price(2, 8, 0.5),
  'gpt-4.1-mini': price(0.4, 1.6, 0.1),
  'gpt-4.1-nano': price(0.1, 0.4, 0.025),
  'gpt-4o': price(2.5, 10, 1.25),
  'gpt-4o-mini': price(0.15, 0.6, 0.075),
  o3: price(2, 8, 0.5),
  'o3-mini': price(1.1, 4.4, 0.55),
  'o4-mini': price(1.1, 4.4, 0.275),
  // Anthropic: input, output, cache read, cache write (5 minutes).
  'claude-opus-4-1': price(15, 75, 1.5, 18.75),
  'claude-opus-4': price(15, 75, 1.5, 18.75),
  'claude-sonnet-4-5': price(3, 15, 0.3, 3.75),
  'claude-sonnet-4': price(3, 15, 0.3, 3.75),
  'claude-3-7-sonnet': price(3, 15, 0.3, 3.75),
  'claude-haiku-4-5': price(1, 5, 0.1, 1.25),
  'claude-3-5-haiku': price(0.8, 4, 0.08, 1),
  // The simulated provider (keel run's offline default, the chaos suite).
  simulated: price(0.4, 1.6, 0.1),
});

/** A price table: the built-in prices with `overrides` over them, checked; a bad entry throws `config.invalid`. */
export function priceTable(overrides: PriceTable | undefined, where = 'agent'): PriceTable {
  if (overrides === undefined) return DEFAULT_PRICES;
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw optionError({
      where,
      option: 'prices',
      message:
        "prices must be an object by model, such as { 'gpt-4.1-mini': { inputUsdPerMillion: 0.4, outputUsdPerMillion: 1.6 } }",
    });
  }
  for (const [model, entry] of Object.entries(overrides)) checkPrice(where, model, entry);
  return Object.freeze({ ...DEFAULT_PRICES, ...overrides });
}

const PRICE_FIELDS = [
  'inputUsdPerMillion',
  'outputUsdPerMillion',
  'cachedInputUsdPerMillion',
  'cacheWriteInputUsdPerMillion',
  'reasoningUsdPerMillion',
] as const satisfies readonly (keyof ModelPrice)[];

function checkPrice(where: string, model: string, entry: unknown): void {
  const path = ['prices', model];
  if (typeof entry !== 'object' || entry === null) {
    throw optionError({
      where,
      option: 'prices',
      path,
      message: `prices["${model}"] must be a price object`,
    });
  }
  for (const key of Object.keys(entry)) {
    if (!(PRICE_FIELDS as readonly string[]).includes(key)) {
      throw optionError({
        where,
        option: 'prices',
        path: [...path, key],
        message: `prices["${model}"] has an unknown field "${key}"; known fields: ${PRICE_FIELDS.join(', ')}`,
      });
    }
  }
  for (const field of PRICE_FIELDS) {
    const value = (entry as Record<string, unknown>)[field];
    const required = field === 'inputUsdPerMillion' || field === 'outputUsdPerMillion';
    if (value === undefined && !required) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw optionError({
        where,
        option: 'prices',
        path: [...path, field],
        message: `prices["${model}"].${field} must be US dollars per million tokens, 0 or more; got ${String(value)}`,
      });
    }
  }
}

/**
 * The price of a model in `table`: by `provider/model`, then by model name, then by the longest key the model name
 * starts with followed by `-` (a dated snapshot), then by provider name alone (`simulated`). Undefined when none.
 */
export function priceOf(table: PriceTable, provider: string, model: string): ModelPrice | undefined {
  // A frozen table (every table keel makes) never changes, so its answers are kept: a run asks once per model call,
  // and a model with no price would otherwise scan every key each time.
  if (!Object.isFrozen(table)) return lookUpPrice(table, provider, model);
  let byProvider = remembered.get(table);
  if (byProvider === undefined) {
    byProvider = new Map();
    remembered.set(table, byProvider);
  }
  let byModel = byProvider.get(provider);
  if (byModel === undefined) {
    byModel = new Map();
    byProvider.set(provider, byModel);
  }
  const known = byModel.get(model);
  if (known !== undefined) return known === NO_PRICE ? undefined : known;
  const price = lookUpPrice(table, provider, model);
  // Bounded: a process meets few distinct models, but a caller could make up model names without end.
  if (byModel.size < MAX_REMEMBERED_MODELS) byModel.set(model, price ?? NO_PRICE);
  return price;
}

const NO_PRICE = Symbol('no price');
const MAX_REMEMBERED_MODELS = 256;
const remembered = new WeakMap<PriceTable, Map<string, Map<string, ModelPrice | typeof NO_PRICE>>>();

function lookUpPrice(table: PriceTable, provider: string, model: string): ModelPrice | undefined {
  const exact = table[`${provider}/${model}`] ?? table[model];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (model.startsWith(`${key}-`) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? table[provider] : table[best];
}
