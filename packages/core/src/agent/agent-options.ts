import { KeelError } from '../errors/keel-error.js';
import { type CircuitBreakerOptions, circuitBreaker } from '../policies/circuit-breaker.js';
import { type Clock, systemClock } from '../policies/clock.js';
import { type Delay, MAX_DELAY_MS, type RandomSource } from '../policies/delays.js';
import { EventEmitter } from '../policies/events.js';
import { type RetryBudget, type RetryBudgetOptions, retryBudget } from '../policies/retry-budget.js';
import { timeout } from '../policies/timeout.js';
import type { ModelProvider } from '../spec/model.js';
import type { Tool } from '../spec/tool.js';
import type { ConversationManager } from './conversation/manager.js';
import { slidingWindow } from './conversation/sliding-window.js';
import { type CorrectionLimits, CorrectionTracker } from './correction-tracker.js';
import type { RunEvent, RunEventListener } from './events.js';
import type { Guardrail } from './guardrails/guardrail.js';
import { type RunLimits, resolveLimits } from './limits.js';
import type { AgentRuntime, ModelSlot, RetrySettings, ToolSlot } from './run-context.js';
import type { CheckpointHook } from './run-state.js';
import type { SchemaLike } from './schema.js';
import { type StructuredOutput, structuredOutput } from './structured-output.js';
import { indexTools, toToolDefinition } from './tool.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from './tool-result.js';

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
  /** The longest Retry-After honoured; a longer one ends that model's retries (the loop falls back). Defaults to 60_000. */
  maxRetryAfterMs?: number;
  /** Time after which a model's retries stop within one step. Defaults to none (the run timeout still applies). */
  maxElapsedMs?: number;
  /** The run's own budget, made afresh for each run. Defaults to `{ maxRetries: 10, ratio: false }`: 10 retries per run. */
  runBudget?: Omit<RetryBudgetOptions, 'clock'>;
  /** A budget shared beyond one run (one per process, say): each retry needs a token from it too. Defaults to none. */
  budget?: RetryBudget;
}

/** Breaker options the agent passes on to each breaker it makes (it sets `name` and `clock` itself). */
export type AgentBreakerOptions = Omit<CircuitBreakerOptions, 'name' | 'clock' | 'initialState'>;

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
  /** Tools the model may call. Defaults to none. */
  tools?: readonly Tool[];
  /** Turn, time, token and parallelism bounds. Defaults: see {@link RunLimits}. */
  limits?: RunLimits;
  /** Retry settings. Defaults: see {@link AgentRetryOptions}. */
  retry?: AgentRetryOptions;
  /** Longest one model request may take, in milliseconds (`network.timeout`). Defaults to 120_000. */
  modelTimeoutMs?: number;
  /** Longest one tool call may take when the tool sets no `timeoutMs` (`tool.timeout`). Defaults to 60_000. */
  toolTimeoutMs?: number;
  /** The breaker per model (provider and model name), kept across runs; `false` for none. Defaults to the breaker's defaults. */
  breaker?: AgentBreakerOptions | false;
  /** The breaker per tool, kept across runs; `false` for none. Defaults to the breaker's defaults. */
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
  /** Longest tool result shown to the model, in characters (longer ones are cut, and say so). Defaults to 32_768. */
  maxToolResultChars?: number;
  /** Where time comes from. Defaults to the system clock. */
  clock?: Clock;
  /** Receives every run's events. Defaults to none. */
  onEvent?: RunEventListener;
  /** Called after every transition of every run's state (a store saves it there). Defaults to none. */
  checkpoint?: CheckpointHook;
}

const KNOWN_OPTIONS = [
  'name',
  'model',
  'fallbacks',
  'instructions',
  'tools',
  'limits',
  'retry',
  'modelTimeoutMs',
  'toolTimeoutMs',
  'breaker',
  'toolBreaker',
  'conversationManager',
  'outputSchema',
  'guardrails',
  'corrections',
  'onMaxTokens',
  'maxOutputTokens',
  'temperature',
  'maxToolResultChars',
  'clock',
  'onEvent',
  'checkpoint',
];

/** Checks the options and builds what every run of the agent shares; a bad option throws `config.invalid`. */
export function resolveAgent<Output>(options: AgentOptions<Output>): AgentRuntime {
  if (typeof options !== 'object' || options === null)
    fail('options must be an object such as { model, tools }');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.includes(key))
      fail(`unknown option "${key}"; known options: ${KNOWN_OPTIONS.join(', ')}`);
  }
  const name = options.name ?? 'agent';
  if (typeof name !== 'string' || name.trim() === '') fail('name must be a non-empty string');
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')
    fail('clock must be a Clock');
  optionalFunction(options.onEvent, 'onEvent');
  optionalFunction(options.checkpoint, 'checkpoint');
  if (options.instructions !== undefined && typeof options.instructions !== 'string')
    fail('instructions must be a string');
  const onMaxTokens = options.onMaxTokens ?? 'fail';
  if (onMaxTokens !== 'fail' && onMaxTokens !== 'continue')
    fail(`onMaxTokens must be 'fail' or 'continue'; got ${String(onMaxTokens)}`);
  const maxToolResultChars = options.maxToolResultChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;
  if (!Number.isInteger(maxToolResultChars) || maxToolResultChars < 1_024)
    fail('maxToolResultChars must be an integer of at least 1024');
  if (
    options.maxOutputTokens !== undefined &&
    !(Number.isInteger(options.maxOutputTokens) && options.maxOutputTokens > 0)
  ) {
    fail('maxOutputTokens must be a positive integer');
  }
  const conversation = options.conversationManager ?? slidingWindow();
  if (typeof conversation?.reduce !== 'function')
    fail('conversationManager must have a reduce function, such as slidingWindow()');
  const corrections = options.corrections ?? {};
  new CorrectionTracker(corrections);
  const guardrails = options.guardrails ?? [];
  if (!Array.isArray(guardrails) || guardrails.some((entry) => typeof entry?.check !== 'function')) {
    fail('guardrails must be an array of guardrail(...) values');
  }
  const events = new EventEmitter<RunEvent>();
  if (options.onEvent !== undefined) events.event(options.onEvent);
  const toolList = options.tools ?? [];
  const tools = resolveTools(toolList, options, clock);
  return {
    name,
    models: resolveModels(options, clock),
    tools,
    toolNames: [...tools.keys()],
    toolDefinitions: toolList.length === 0 ? undefined : toolList.map(toToolDefinition),
    limits: resolveLimits(options.limits, 'agent'),
    retry: resolveRetry(options.retry ?? {}, clock),
    clock,
    events,
    instructions: options.instructions,
    guardrails,
    hasGuardrails: {
      input: guardrails.some((entry) => entry.stage === 'input'),
      output: guardrails.some((entry) => entry.stage === 'output'),
      toolCall: guardrails.some((entry) => entry.stage === 'tool-call'),
    },
    output: resolveOutput(options.outputSchema),
    conversation,
    corrections,
    onMaxTokens,
    maxToolResultChars,
    maxOutputTokens: options.maxOutputTokens,
    temperature: options.temperature,
    checkpoint: options.checkpoint,
  };
}

function resolveModels(options: AgentOptions<unknown>, clock: Clock): ModelSlot[] {
  const fallbacks = options.fallbacks ?? [];
  if (!Array.isArray(fallbacks)) fail('fallbacks must be an array of model providers');
  const timeoutMs = options.modelTimeoutMs ?? 120_000;
  milliseconds(timeoutMs, 'modelTimeoutMs');
  const modelTimeout = timeout(timeoutMs, { code: 'network.timeout', strategy: 'forced', clock });
  const slots = new Map<string, ModelSlot>();
  return [options.model, ...fallbacks].map((provider, index) => {
    const where = index === 0 ? 'model' : `fallbacks[${index - 1}]`;
    if (
      typeof provider?.generate !== 'function' ||
      typeof provider.provider !== 'string' ||
      typeof provider.model !== 'string'
    ) {
      fail(
        `${where} must be a model provider (an object with provider, model and generate), such as openai('gpt-4.1-mini')`,
      );
    }
    const key = `${provider.provider}/${provider.model}`;
    const existing = slots.get(key);
    if (existing !== undefined) return existing;
    const slot: ModelSlot = {
      kind: 'model',
      key,
      provider,
      breaker: makeBreaker(options.breaker, key, clock, 'breaker'),
      timeout: modelTimeout,
      watchers: new Set(),
    };
    forwardBreakerMoves(slot);
    slots.set(key, slot);
    return slot;
  });
}

function resolveTools(
  tools: readonly Tool[],
  options: AgentOptions<unknown>,
  clock: Clock,
): Map<string, ToolSlot> {
  const defaultTimeoutMs = options.toolTimeoutMs ?? 60_000;
  milliseconds(defaultTimeoutMs, 'toolTimeoutMs');
  const slots = new Map<string, ToolSlot>();
  for (const [name, entry] of indexTools(tools)) {
    const slot: ToolSlot = {
      kind: 'tool',
      key: name,
      tool: entry,
      breaker: makeBreaker(options.toolBreaker, `tool:${name}`, clock, 'toolBreaker'),
      timeout: timeout(entry.timeoutMs ?? defaultTimeoutMs, {
        code: 'tool.timeout',
        strategy: 'forced',
        clock,
      }),
      watchers: new Set(),
    };
    forwardBreakerMoves(slot);
    slots.set(name, slot);
  }
  return slots;
}

function makeBreaker(
  options: AgentBreakerOptions | false | undefined,
  name: string,
  clock: Clock,
  where: string,
) {
  if (options === false) return undefined;
  if (options !== undefined && (typeof options !== 'object' || options === null))
    fail(`${where} must be breaker options or false`);
  return circuitBreaker({ ...options, name, clock });
}

/** A breaker's moves reach the runs that use it while they run (one subscription per breaker, not per run). */
function forwardBreakerMoves(slot: ModelSlot | ToolSlot): void {
  slot.breaker?.onStateChange((transition) => {
    for (const run of slot.watchers) run.breakerMoved(slot, transition);
  });
}

function resolveRetry(options: AgentRetryOptions, clock: Clock): RetrySettings {
  if (typeof options !== 'object' || options === null) fail('retry must be an object');
  const runBudget = { maxRetries: 10, ratio: false as const, ...(options.runBudget ?? {}) };
  const createRunBudget = (budgetClock: Clock) => retryBudget({ ...runBudget, clock: budgetClock });
  createRunBudget(clock);
  const shared = options.budget;
  if (
    shared !== undefined &&
    (typeof shared.tryAcquireRetry !== 'function' || typeof shared.recordRequest !== 'function')
  ) {
    fail('retry.budget must be a RetryBudget, such as retryBudget()');
  }
  const modelMaxAttempts = options.maxAttempts ?? 3;
  const toolMaxAttempts = options.toolMaxAttempts ?? 3;
  if (!Number.isInteger(modelMaxAttempts) || modelMaxAttempts < 1)
    fail('retry.maxAttempts must be an integer of at least 1');
  if (!Number.isInteger(toolMaxAttempts) || toolMaxAttempts < 1)
    fail('retry.toolMaxAttempts must be an integer of at least 1');
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  milliseconds(maxRetryAfterMs, 'retry.maxRetryAfterMs', true);
  if (options.maxElapsedMs !== undefined) milliseconds(options.maxElapsedMs, 'retry.maxElapsedMs');
  return {
    modelMaxAttempts,
    toolMaxAttempts,
    delay: options.delay,
    random: options.random,
    maxRetryAfterMs,
    maxElapsedMs: options.maxElapsedMs,
    createRunBudget,
    sharedBudget: shared,
  };
}

function resolveOutput<Output>(schema: StructuredOutput<Output> | SchemaLike<Output> | undefined) {
  if (schema === undefined) return undefined;
  const candidate = schema as Partial<StructuredOutput<Output>>;
  if (typeof candidate.parse === 'function' && typeof candidate.jsonSchema === 'object') {
    return schema as StructuredOutput<unknown>;
  }
  return structuredOutput({ schema: schema as SchemaLike<Output> }) as StructuredOutput<unknown>;
}

function milliseconds(value: unknown, name: string, zeroAllowed = false): void {
  if (typeof value !== 'number' || !(zeroAllowed ? value >= 0 : value > 0) || value > MAX_DELAY_MS) {
    fail(
      `${name} must be milliseconds ${zeroAllowed ? 'from 0' : 'above 0'} and at most ${MAX_DELAY_MS}; got ${String(value)}`,
    );
  }
}

function optionalFunction(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'function') fail(`${name} must be a function`);
}

function fail(message: string): never {
  throw new KeelError('config.invalid', `agent: ${message}`, { data: { where: 'agent' } });
}
