import { type Clock, systemClock } from '../policies/clock.js';
import { EventEmitter } from '../policies/events.js';
import type { ModelProvider } from '../spec/model.js';
import type { RunStore } from '../spec/run-store.js';
import type { Tool } from '../spec/tool.js';
import {
  type AgentBreakerOptions,
  type AgentRetryOptions,
  agentConfigError as fail,
  resolveModels,
  resolveRetry,
  resolveTools,
} from './agent-dependencies.js';
import type { ConversationManager } from './conversation/manager.js';
import { slidingWindow } from './conversation/sliding-window.js';
import { type CorrectionLimits, CorrectionTracker } from './correction-tracker.js';
import { type DurabilityOptions, resolveDurability } from './durability.js';
import type { RunEvent, RunEventListener } from './events.js';
import type { Guardrail } from './guardrails/guardrail.js';
import { type RunLimits, resolveLimits } from './limits.js';
import type { AgentRuntime } from './run-context.js';
import type { CheckpointHook } from './run-state.js';
import type { SchemaLike } from './schema.js';
import { type StructuredOutput, structuredOutput } from './structured-output.js';
import { toToolDefinition } from './tool.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from './tool-result.js';

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
  /**
   * The breaker per model (provider and model name), kept across runs; `false` for none. Defaults to the breaker's
   * defaults, except that `provider.auth` and `provider.quota_exhausted` do not count as failures (an open breaker
   * would send runs to a fallback, which the loop never does for those).
   */
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
  'store',
  'durability',
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
    durability: resolveDurability(options.store, options.durability),
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

function optionalFunction(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'function') fail(`${name} must be a function`);
}
