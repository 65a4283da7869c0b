import type { BudgetOptions } from '../governance/budget-options.js';
import type { PaceOptions } from '../governance/pace-options.js';
import type { PriceTable } from '../governance/prices.js';
import type { TenantOptions } from '../governance/tenant-limits.js';
import type { CircuitBreakerOptions } from '../policies/circuit-breaker.js';
import type { Clock } from '../policies/clock.js';
import type { Delay, RandomSource } from '../policies/delays.js';
import type { RetryBudget, RetryBudgetOptions } from '../policies/retry-budget.js';
import type { SchemaLike } from '../schemas/schema.js';
import type { ModelProvider, ToolChoice } from '../spec/model.js';
import type { RunEventListener } from '../spec/run-events.js';
import type { RunStore } from '../spec/run-store.js';
import type { Tool, ToolSource } from '../spec/tool.js';
import type { ChildAgent } from './compose/child-agent.js';
import type { ConversationManager } from './conversation/manager.js';
import type { CorrectionLimits } from './correction/correction-tracker.js';
import type { StructuredOutput } from './correction/structured-output.js';
import type { Guardrail } from './guardrails/guardrail.js';
import type { UncertainCallPolicy } from './run/agent-runtime.js';
import type { DurabilityOptions } from './run/durability.js';
import type { RunLimits } from './run/limits.js';
import type { CheckpointHook } from './run/run-state.js';

/** Options of `agent()`. */
export interface AgentOptions<Output = string> {
  /** Names the agent in runs, events and stores. Defaults to `agent`. */
  name?: string;
  /** The primary model. Required. */
  model: ModelProvider;
  /** Models tried in order when the one in use is unavailable (rate limited, overloaded, failing, breaker open). Defaults to none. */
  fallbacks?: readonly ModelProvider[];
  /** The system message. Defaults to none. */
  instructions?: string;
  /**
   * Tools the model may call: tools, and tool sources whose tools may change while the agent lives (an MCP toolset,
   * `mcpTools(...)`), read again before each model step when their `version` moved. Names must be unique among the
   * plain tools; a source's tool whose name an earlier entry already has is left out (with a process warning).
   * Defaults to none.
   */
  tools?: readonly (Tool | ToolSource)[];
  /**
   * Agents the model may hand the conversation over to (each one a `transfer_to_<name>` tool, see `handoff()`): the
   * agent handed to answers instead, in a child run. An entry is an agent, or `handoff(agent, options)` for a filter
   * or another name. Defaults to none.
   */
  handoffs?: readonly (ChildAgent | Tool)[];
  /** Turn, time, token and parallelism bounds. Defaults: see {@link RunLimits}. */
  limits?: RunLimits;
  /** Retry settings. Defaults: see {@link AgentRetryOptions}. */
  retry?: AgentRetryOptions;
  /** Longest one model request may take, in milliseconds (`network.timeout`). Defaults to 120_000. */
  modelTimeoutMs?: number;
  /**
   * For a streamed call (the run has `onTextDelta`): the longest wait from sending the request to the first byte of
   * the answer, in milliseconds, then `network.timeout` with `data.stalled: 'first_byte'` (retried like any timeout).
   * Defaults to 30_000.
   */
  streamFirstByteTimeoutMs?: number;
  /**
   * For a streamed call: the longest silence between two chunks of the answer, in milliseconds, then
   * `network.timeout` with `data.stalled: 'idle'` and the bytes received. Defaults to 15_000.
   */
  streamIdleTimeoutMs?: number;
  /**
   * Whether a streamed model call that breaks after part of the answer reached the caller (a reset, a cut-off, an
   * invalid chunk, a stall) is retried, within the run's retry budget and breaker rules, on the same model or the
   * fallback: text already delivered is never sent again (the `stream-recovered` event says whether the new answer
   * `continued` it or `restarted` the step's text). `false` fails the step at once with the error,
   * `data.partialOutput` holding what was streamed. Defaults to true.
   */
  streamRecovery?: boolean;
  /** Longest one tool call may take when the tool sets no `timeoutMs` (`tool.timeout`). Defaults to 60_000. */
  toolTimeoutMs?: number;
  /**
   * The breaker per model (provider and model name), kept across runs; `false` for none. Defaults: see
   * {@link AgentBreakerOptions} (10 failures in a row, open 5 s doubling to 60 s).
   */
  breaker?: AgentBreakerOptions | false;
  /**
   * The breaker per tool, kept across runs; `false` for none. Defaults: see {@link AgentBreakerOptions} (90% of the
   * calls of the last 60 s failed, over at least 20 calls; open 5 s doubling to 60 s).
   */
  toolBreaker?: AgentBreakerOptions | false;
  /** Shrinks the conversation on a context overflow. Defaults to `slidingWindow()`. */
  conversationManager?: ConversationManager;
  /** The shape of the final answer: a `structuredOutput(...)`, a zod 4 schema or a JSON Schema. Defaults to text. */
  outputSchema?: StructuredOutput<Output> | SchemaLike<Output>;
  /** Input, output and tool-call checks. Defaults to none. */
  guardrails?: readonly Guardrail[];
  /** Bounds on the model's self-correction of invalid tool calls. Defaults: see `CorrectionLimits`. */
  corrections?: CorrectionLimits;
  /** What an answer cut at the output token limit does: fail with `provider.max_tokens`, or ask the model to continue. Defaults to `fail`. */
  onMaxTokens?: 'fail' | 'continue';
  /** Passed to the model as its output token limit. Defaults to the provider's. */
  maxOutputTokens?: number;
  /** Passed to the model. Defaults to the provider's. */
  temperature?: number;
  /**
   * Whether and which tool the model must call at each step: `auto` (the model decides), `none`, `required` (some
   * tool) or `{ name }` (that tool). A choice that forces a call (`required`, `{ name }`) holds until the model has
   * called a tool in the run, then the run goes on with `auto`, so that it can end (as the OpenAI Agents SDK's
   * `resetToolChoice`). A tool name the agent does not offer is `config.invalid`. A run's own `toolChoice` overrides
   * it. Defaults to none (the provider's default, `auto`).
   */
  toolChoice?: ToolChoice;
  /** Longest tool result shown to the model, in characters (longer ones are cut, and say so). Defaults to 32_768. */
  maxToolResultChars?: number;
  /**
   * What a run does when the model calls a tool that is not idempotent again, with the same arguments, after an
   * earlier call's outcome became unknown (it timed out, or its connection dropped, after it may have taken effect)
   * and the tool's `reconcile` could not settle it: `interrupt` ends the run `interrupted` (stop reason
   * `decision_required`) with an `uncertain` decision pending, for a person to `execute` or `abandon` (as after a
   * crash; resuming needs a store); `refuse` does not run the repeat and tells the model so. Either way the effect is
   * never repeated without a person's say. Defaults to `interrupt`.
   */
  uncertainCalls?: UncertainCallPolicy;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
  /** Receives every run's events. Defaults to none. */
  onEvent?: RunEventListener;
  /** Called after every transition of every run's state, before the store saves it. Defaults to none. */
  checkpoint?: CheckpointHook;
  /**
   * Makes every run durable: the run is created in the store, leased, checkpointed after every transition, its tool
   * calls recorded in the store's ledger, and it can be resumed (`agent.resume(runId)`) from another process after a
   * crash. Defaults to none (runs live in memory only).
   */
  store?: RunStore;
  /** How durable runs use the store (lease, owner, retries, timeouts). Defaults: see {@link DurabilityOptions}. */
  durability?: DurabilityOptions;
  /**
   * How many runs of one tenant (the run option `tenant`) run at once; the rest wait in order, within a bounded queue
   * and wait, else `run` rejects with `policy.bulkhead_full`. Defaults to no limit. See {@link TenantOptions}.
   */
  tenants?: TenantOptions;
  /**
   * Prices by model (US dollars per million tokens), over keel's built-in table (`DEFAULT_PRICES`, read from the
   * providers' price lists on `PRICES_AS_OF`): the report, the `model-call-end` events and the metrics show what each
   * call, run and tenant cost, and cost budgets reserve by them. Defaults to the built-in table.
   */
  prices?: PriceTable;
  /**
   * Token and cost budgets per run, session, tenant or for everything, per period (a day, say), reserved before each
   * model call and settled after it: a call that cannot be reserved is not sent. Defaults to none. See
   * {@link BudgetOptions}.
   */
  budgets?: BudgetOptions;
  /**
   * Paces the agent's model calls by what each provider says of its limits (the rate-limit headers of every answer,
   * the Retry-After of every 429): a call waits for its turn in the window rather than draw a 429. `true` paces the
   * agent's runs in this process; `{ store: shared.paceStore() }` (`@keel/redis`) paces a whole fleet against one
   * window per provider/model/key. Waiting calls go by run `priority`, then in turns between tenants. Defaults to
   * false. See {@link PaceOptions} and `PaceStore`.
   */
  pace?: boolean | PaceOptions;
}

/** How the loop retries. Every retry of a run, model or tool, draws from the run's budget (and `budget` when set). */
export interface AgentRetryOptions {
  /** Calls to one model within one step, the first included, before the loop falls back. Defaults to 3. */
  maxAttempts?: number;
  /** Calls of one tool call, the first included (retried only when idempotent or nothing ran). Defaults to 3. */
  toolMaxAttempts?: number;
  /** The wait before each retry. Defaults to the retry policy's: full jitter over exponential 500 ms to 30 s. */
  delay?: Delay;
  /** Randomness for the delay's jitter. Defaults to `Math.random`. */
  random?: RandomSource;
  /**
   * The longest Retry-After honoured. A longer one, or one that ends at or after the run's deadline, is not waited
   * for: the loop falls back to the next model at once or, with none left, fails at once with the provider's error
   * (`provider.rate_limited`, say) whose `data` holds `retryAfterMs` (the wait asked for), `remainingMs` and `reason`
   * (`retry_after_past_deadline` or `retry_after_too_long`). Defaults to 60_000.
   */
  maxRetryAfterMs?: number;
  /** Time after which a model's retries stop within one step. Defaults to none (the run timeout still applies). */
  maxElapsedMs?: number;
  /**
   * When the breaker of the run's last model (no fallback left) is open: the longest the run waits, all such waits
   * together, in milliseconds, for the breaker to let a probe through rather than failing at once with
   * `policy.circuit_open`. The run waits only when the half-open moment lies within this bound and before its
   * deadline, and so does the end of the Retry-After of the failure that opened the breaker (a probe sent before it
   * cannot succeed); each wait takes a retry from the budgets; one run probes, the others wait for its outcome. 0
   * fails at once. Defaults to 30_000.
   */
  waitForOpenBreakerMs?: number;
  /** The run's own budget, made afresh for each run. Defaults to `{ maxRetries: 10, ratio: false }`: 10 retries per run. */
  runBudget?: Omit<RetryBudgetOptions, 'clock'>;
  /** A budget shared beyond one run (one per process, say): each retry needs a token from it too. Defaults to none. */
  budget?: RetryBudget;
}

/**
 * Breaker options the agent passes on to each breaker it makes (it sets `name` and `clock` itself). The agent's
 * defaults differ from `circuitBreaker()`'s, so that a breaker opens on a dependency that is down, not on a flaky one
 * that retries get through:
 * - `strategy`, for a model: `consecutive({ threshold: 10 })`. Measured by `keel chaos` (transient-30: 30% faults,
 *   50 runs at once on one agent, about 150 calls per model): 5 in a row tripped the primary's breaker and failed
 *   runs retries would have saved; 10 in a row happens by chance about once in 5,000 such runs of the scenario,
 *   while an outage still opens the breaker after 10 calls. A failure-rate window such as 50% of the last 20 calls
 *   trips more often at a 30% fault rate than 5 in a row does (20 calls at 30% often hold 10 failures).
 * - `strategy`, for a tool: `timeWindow({ windowMs: 60_000, buckets: 10, failureRateThreshold: 0.9, minimumCalls:
 *   20 })`: it opens when at least 90% of the tool's calls that ended in the last 60 s failed, once there were 20.
 *   A tool that is down fails every call and opens it after 20 calls; a slow, flaky one does not. A tool failing
 *   half its calls by timing out (the successes at once, the failures after its timeout) ends its failures in
 *   bursts: 25 timeouts end together 3 s after 50 runs called it, which opened `consecutive({ threshold: 10 })` and
 *   cut the chaos suite's completion to 46-54% on some seeds (94-96% on others); with the window it is 78-96%
 *   (`keel chaos`, a 50% hang rate on `get_weather`, 50 runs, seeds 1-5). 18 failures in 20 calls at a 50% fault
 *   rate happen about once in 5,000 windows.
 * - `halfOpenAfterMs`: `{ initialMs: 5_000, factor: 2, maxMs: 60_000 }`: the first probe after 5 s, then 10, 20, 40,
 *   60 s while probes keep failing. Runs with no fallback left wait for the probe (`retry.waitForOpenBreakerMs`).
 * - `probeTimeoutMs`: the call's timeout (`modelTimeoutMs`, the tool's `timeoutMs` or `toolTimeoutMs`), at least
 *   1_000: a probe is a real call, as slow as any other.
 * - `isFailure`: as `circuitBreaker()`'s, except that `provider.auth` and `provider.quota_exhausted` do not count (an
 *   open breaker would send runs to a fallback, which the loop never does for those).
 * Everything else as `circuitBreaker()`'s defaults. Options given replace these one by one.
 */
export type AgentBreakerOptions = Omit<CircuitBreakerOptions, 'name' | 'clock' | 'initialState'>;
