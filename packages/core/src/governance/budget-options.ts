import { optionError } from '../options/option-error.js';
import { type BudgetStore, memoryBudgetStore } from './budget-store.js';

/** Whose spend a budget bounds. */
export type BudgetScope = 'run' | 'session' | 'tenant' | 'global';

/**
 * One budget: at most `maxTokens` tokens (input plus output) and/or `maxCostUsd` US dollars, per `scope`, per
 * `period`.
 *
 * - `run`: each run's own spend (checked against the run's state: it survives a resume, in any process).
 * - `session`: the spend of every run on one session (`sessionId`); runs on no session are not bound by it.
 * - `tenant`: the spend of every run of one tenant (the run option `tenant`, `keel submit --tenant`); runs with no
 *   tenant count as tenant `default`.
 * - `global`: every run that uses the store (with a Redis store: the whole fleet).
 */
export interface BudgetLimit {
  /** Names the budget in errors and store keys: letters, digits and `. _ -`, 1 to 64 characters. Required. */
  readonly name: string;
  readonly scope: BudgetScope;
  /** Most tokens, input plus output. Defaults to no token limit. */
  readonly maxTokens?: number;
  /** Most US dollars, by the agent's price table. Defaults to no cost limit. */
  readonly maxCostUsd?: number;
  /**
   * The period the budget renews with: `hour`, `day` or `week` (UTC, from the Unix epoch), or milliseconds. Defaults to
   * none (the budget never renews). Not allowed for `run`.
   */
  readonly period?: 'hour' | 'day' | 'week' | number;
}

/**
 * The agent's `budgets` option. Before each model call (retries, fallbacks and continuations included) keel reserves
 * the call's worst case in every budget that applies: its prompt tokens (estimated: see `estimatePromptTokens`) plus
 * its output limit, and their cost at the model's price; after the call it settles the actual spend. A call that
 * cannot be reserved is not sent, and the run degrades by this rule:
 *
 * 1. When a cost budget refused it and a later model of the chain (`fallbacks`) has a price that makes the call's worst
 *    case cheaper, the call goes to the cheapest such model whose reservation fits, with the same `maxOutputTokens`;
 *    the run stays on that model (as after any fallback), and the `fallback-used` event and the report's
 *    `fallbacks.used` say so with `errorCode: 'policy.budget_exhausted'`. Off with `cheaperFallbacks: false`.
 * 2. Otherwise, when the budget has room for the prompt and at least `minOutputTokens` of output, the call is sent to
 *    its own model with a smaller `maxOutputTokens` that fits.
 * 3. Otherwise the run ends `failed`, stop reason `budget_exhausted`, with `policy.budget_exhausted` whose `data`
 *    names the budget (`budget`, `scope`, `unit`, `limit`, `used`, `requested`).
 */
export interface BudgetOptions {
  /** The budgets. Required: at least one. */
  readonly limits: readonly BudgetLimit[];
  /**
   * Where the `session`, `tenant` and `global` counters live. Defaults to a memory store of the agent (its runs in this
   * process share it); a fleet shares a Redis one (`@keel/redis`'s `budgetStore()`).
   */
  readonly store?: BudgetStore;
  /**
   * When the store cannot answer: `closed` sends no call (it fails with a retryable `store.unavailable`, retried by
   * the run's retry policy, and calls go through again once the store answers); `open` sends the call unreserved (and
   * uncounted). Defaults to `closed`.
   */
  readonly onStoreUnavailable?: 'closed' | 'open';
  /**
   * The output tokens reserved for a call when the agent sets no `maxOutputTokens`; the call is then sent with this
   * limit, so that the reservation holds. Defaults to 4_096.
   */
  readonly defaultOutputTokens?: number;
  /** The smallest `maxOutputTokens` rule 2 shrinks a call to. Defaults to 256. */
  readonly minOutputTokens?: number;
  /**
   * Whether rule 1 may send a call a cost budget refused to a cheaper later model of the chain. Set false to keep a
   * run on its model when money runs short (rule 2 shrinks its output instead). Defaults to true.
   */
  readonly cheaperFallbacks?: boolean;
}

/** The `budgets` option, checked, with its defaults. */
export interface ResolvedBudgets {
  readonly limits: readonly ResolvedLimit[];
  readonly store: BudgetStore;
  readonly onStoreUnavailable: 'closed' | 'open';
  readonly defaultOutputTokens: number;
  readonly minOutputTokens: number;
  readonly cheaperFallbacks: boolean;
}

/** A budget with its period in milliseconds (0: none). */
export interface ResolvedLimit {
  readonly name: string;
  readonly scope: BudgetScope;
  readonly maxTokens: number | undefined;
  /** In millionths of a US dollar. */
  readonly maxCostMicroUsd: number | undefined;
  readonly periodMs: number;
}

const PERIODS = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const;
const SCOPES: readonly BudgetScope[] = ['run', 'session', 'tenant', 'global'];
const KNOWN = [
  'limits',
  'store',
  'onStoreUnavailable',
  'defaultOutputTokens',
  'minOutputTokens',
  'cheaperFallbacks',
];
const LIMIT_KNOWN = ['name', 'scope', 'maxTokens', 'maxCostUsd', 'period'];
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** Checks the `budgets` option; a bad one throws `config.invalid` saying what to write. Undefined when not set. */
export function resolveBudgets(
  options: BudgetOptions | undefined,
  where = 'agent',
): ResolvedBudgets | undefined {
  if (options === undefined) return undefined;
  const fail = (option: string, message: string): never => {
    throw optionError({ where, option, message });
  };
  if (typeof options !== 'object' || options === null) {
    fail(
      'budgets',
      "budgets must be an object such as { limits: [{ name: 'daily', scope: 'tenant', maxCostUsd: 5, period: 'day' }] }",
    );
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key))
      fail(`budgets.${key}`, `budgets has an unknown option "${key}"; known: ${KNOWN.join(', ')}`);
  }
  if (!Array.isArray(options.limits) || options.limits.length === 0) {
    fail(
      'budgets.limits',
      'budgets.limits must be a non-empty array of budgets ({ name, scope, maxTokens or maxCostUsd })',
    );
  }
  const names = new Set<string>();
  const limits = options.limits.map((limit, index): ResolvedLimit => {
    const at = `budgets.limits[${index}]`;
    if (typeof limit !== 'object' || limit === null) return fail(at, `${at} must be an object`);
    for (const key of Object.keys(limit)) {
      if (!LIMIT_KNOWN.includes(key))
        fail(`${at}.${key}`, `${at} has an unknown field "${key}"; known: ${LIMIT_KNOWN.join(', ')}`);
    }
    if (typeof limit.name !== 'string' || !NAME.test(limit.name)) {
      fail(
        `${at}.name`,
        `${at}.name must be 1 to 64 letters, digits, '.', '_' or '-'; got ${String(limit.name)}`,
      );
    }
    if (names.has(limit.name))
      fail(`${at}.name`, `${at}.name "${limit.name}" is used twice: budget names must be unique`);
    names.add(limit.name);
    if (!SCOPES.includes(limit.scope))
      fail(`${at}.scope`, `${at}.scope must be one of ${SCOPES.join(', ')}; got ${String(limit.scope)}`);
    if (limit.maxTokens === undefined && limit.maxCostUsd === undefined) {
      fail(at, `${at} must set maxTokens, maxCostUsd or both`);
    }
    if (limit.maxTokens !== undefined && !(Number.isInteger(limit.maxTokens) && limit.maxTokens > 0)) {
      fail(`${at}.maxTokens`, `${at}.maxTokens must be a positive integer; got ${String(limit.maxTokens)}`);
    }
    if (
      limit.maxCostUsd !== undefined &&
      !(typeof limit.maxCostUsd === 'number' && Number.isFinite(limit.maxCostUsd) && limit.maxCostUsd > 0)
    ) {
      fail(
        `${at}.maxCostUsd`,
        `${at}.maxCostUsd must be US dollars above 0; got ${String(limit.maxCostUsd)}`,
      );
    }
    let periodMs = 0;
    if (limit.period !== undefined) {
      if (limit.scope === 'run')
        fail(`${at}.period`, `${at}.period is not allowed for scope run: a run's budget does not renew`);
      periodMs = typeof limit.period === 'number' ? limit.period : (PERIODS[limit.period] ?? Number.NaN);
      if (!(Number.isInteger(periodMs) && periodMs >= 1_000)) {
        fail(
          `${at}.period`,
          `${at}.period must be 'hour', 'day', 'week' or milliseconds of at least 1000; got ${String(limit.period)}`,
        );
      }
    }
    return {
      name: limit.name,
      scope: limit.scope,
      maxTokens: limit.maxTokens,
      maxCostMicroUsd: limit.maxCostUsd === undefined ? undefined : Math.floor(limit.maxCostUsd * 1_000_000),
      periodMs,
    };
  });
  const rule = options.onStoreUnavailable ?? 'closed';
  if (rule !== 'closed' && rule !== 'open') {
    fail(
      'budgets.onStoreUnavailable',
      `budgets.onStoreUnavailable must be 'closed' or 'open'; got ${String(rule)}`,
    );
  }
  const store = options.store ?? memoryBudgetStore();
  if (
    typeof store?.reserve !== 'function' ||
    typeof store.settle !== 'function' ||
    typeof store.read !== 'function'
  ) {
    fail('budgets.store', 'budgets.store must be a BudgetStore, such as memoryBudgetStore()');
  }
  const defaultOutputTokens = positiveInteger(
    options.defaultOutputTokens ?? 4_096,
    'budgets.defaultOutputTokens',
    fail,
  );
  const minOutputTokens = positiveInteger(options.minOutputTokens ?? 256, 'budgets.minOutputTokens', fail);
  const cheaperFallbacks = options.cheaperFallbacks ?? true;
  if (typeof cheaperFallbacks !== 'boolean') {
    fail(
      'budgets.cheaperFallbacks',
      `budgets.cheaperFallbacks must be true or false; got ${String(cheaperFallbacks)}`,
    );
  }
  return { limits, store, onStoreUnavailable: rule, defaultOutputTokens, minOutputTokens, cheaperFallbacks };
}

function positiveInteger(
  value: unknown,
  option: string,
  fail: (option: string, message: string) => never,
): number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value > 0)) {
    fail(option, `${option} must be a positive integer; got ${String(value)}`);
  }
  return value as number;
}
