import { resolveGovernance } from '../governance/governance.js';
import { resolveTenantLimits } from '../governance/tenant-limits.js';
import type { CircuitBreaker } from '../policies/circuit-breaker.js';
import { systemClock } from '../policies/clock.js';
import { DeadlineQueue } from '../policies/deadline-queue.js';
import { Emitter } from '../policies/events.js';
import {
  DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
} from '../policies/stream-stall.js';
import type { SchemaLike } from '../schemas/schema.js';
import type { RunEvent } from '../spec/run-events.js';
import type { Tool, ToolSource } from '../spec/tool.js';
import { resolveModels, resolveRetry, toolSlots } from './agent-dependencies.js';
import type { AgentOptions } from './agent-options.js';
import type { ChildAgent } from './compose/child-agent.js';
import { handoff } from './compose/handoff.js';
import { slidingWindow } from './conversation/sliding-window.js';
import { CorrectionTracker } from './correction/correction-tracker.js';
import { type StructuredOutput, structuredOutput } from './correction/structured-output.js';
import type { AgentRuntime, ToolCatalog } from './run/agent-runtime.js';
import { checkMilliseconds, agentConfigError as fail } from './run/config-error.js';
import { resolveDurability } from './run/durability.js';
import { resolveLimits } from './run/limits.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from './run/tool-result.js';
import { SourcedToolCatalog } from './tool-catalog.js';
import { toToolDefinition } from './tools/tool.js';
import { toolChoiceProblem } from './tools/tool-choice.js';

const KNOWN_OPTIONS = [
  'name',
  'model',
  'fallbacks',
  'instructions',
  'tools',
  'handoffs',
  'limits',
  'retry',
  'modelTimeoutMs',
  'streamFirstByteTimeoutMs',
  'streamIdleTimeoutMs',
  'streamRecovery',
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
  'toolChoice',
  'maxToolResultChars',
  'uncertainCalls',
  'clock',
  'onEvent',
  'checkpoint',
  'store',
  'durability',
  'tenants',
  'prices',
  'budgets',
  'pace',
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
  const uncertainCalls = options.uncertainCalls ?? 'interrupt';
  if (uncertainCalls !== 'interrupt' && uncertainCalls !== 'refuse')
    fail(`uncertainCalls must be 'interrupt' or 'refuse'; got ${String(uncertainCalls)}`);
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
  const streamFirstByteTimeoutMs = options.streamFirstByteTimeoutMs ?? DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS;
  checkMilliseconds(streamFirstByteTimeoutMs, 'streamFirstByteTimeoutMs');
  const streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  checkMilliseconds(streamIdleTimeoutMs, 'streamIdleTimeoutMs');
  const streamRecovery = options.streamRecovery ?? true;
  if (typeof streamRecovery !== 'boolean') fail('streamRecovery must be true or false');
  const events = new Emitter<RunEvent>();
  if (options.onEvent !== undefined) events.event(options.onEvent);
  const breakers = new Map<string, CircuitBreaker>();
  const addBreaker = (breaker: CircuitBreaker) => breakers.set(breaker.name, breaker);
  const models = resolveModels(options, clock);
  for (const slot of models) if (slot.breaker !== undefined) addBreaker(slot.breaker);
  const { plain, sources } = splitTools([...(options.tools ?? []), ...handoffTools(options.handoffs)]);
  const slots = toolSlots(options, clock, addBreaker);
  const tools = slots.index(plain);
  if (options.toolChoice !== undefined) {
    const problem = toolChoiceProblem(options.toolChoice, [...tools.keys()], sources.length > 0);
    if (problem !== undefined) fail(problem);
  }
  const runtime = {
    name,
    models,
    tools,
    toolNames: [...tools.keys()] as readonly string[],
    toolDefinitions: plain.length === 0 ? undefined : plain.map(toToolDefinition),
    toolCatalog: undefined as ToolCatalog | undefined,
    breakers,
    limits: resolveLimits(options.limits, 'agent'),
    retry: resolveRetry(options.retry ?? {}, clock),
    clock,
    events,
    runDeadlines: new DeadlineQueue(clock),
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
    uncertainCalls,
    maxOutputTokens: options.maxOutputTokens,
    temperature: options.temperature,
    toolChoice: options.toolChoice,
    stream: {
      firstByteTimeoutMs: streamFirstByteTimeoutMs,
      idleTimeoutMs: streamIdleTimeoutMs,
      recovery: streamRecovery,
    },
    checkpoint: options.checkpoint,
    tenants: resolveTenantLimits(options.tenants, clock),
    durability: resolveDurability(options.store, options.durability),
    governance: resolveGovernance(options.prices, options.budgets, clock, options.pace),
  };
  // The catalog updates the runtime's own tool fields, which every run reads.
  if (sources.length > 0) runtime.toolCatalog = new SourcedToolCatalog(runtime, plain, sources, slots);
  return runtime;
}

/** Plain tools and tool sources, told apart (a source has `tools()` and a numeric `version`; a tool has `execute`). */
function splitTools(entries: readonly (Tool | ToolSource)[]): { plain: Tool[]; sources: ToolSource[] } {
  if (!Array.isArray(entries))
    fail('tools must be an array of tools built with tool(), or tool sources such as mcpTools(...)');
  const plain: Tool[] = [];
  const sources: ToolSource[] = [];
  entries.forEach((entry, index) => {
    const candidate = entry as Partial<Tool & ToolSource> | null;
    if (typeof candidate?.execute === 'function') plain.push(entry as Tool);
    else if (
      typeof candidate?.tools === 'function' &&
      typeof candidate.version === 'number' &&
      Array.isArray(candidate.current)
    )
      sources.push(entry as ToolSource);
    else
      fail(
        `tools[${index}] is neither a tool nor a tool source: build tools with tool({...}), or pass a toolset such as mcpTools(...)`,
      );
  });
  return { plain, sources };
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

/** The tools of the `handoffs` option: an agent becomes `handoff(agent)`, a tool made by `handoff()` stays as it is. */
function handoffTools(handoffs: AgentOptions['handoffs']): Tool[] {
  if (handoffs === undefined) return [];
  if (!Array.isArray(handoffs))
    fail('handoffs must be an array of agents (or handoff(agent, options) tools)');
  return handoffs.map((entry, index) => {
    if (typeof entry !== 'object' || entry === null)
      fail(`handoffs[${index}] must be an agent made by agent()`);
    if (typeof (entry as Tool).execute === 'function') return entry as Tool;
    return handoff(entry as ChildAgent) as Tool;
  });
}
