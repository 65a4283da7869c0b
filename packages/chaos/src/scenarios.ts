import { KeelError } from '@keel/core';
import type { ChaosScenario, ModelFaults } from './scenario.js';

/** Transient 5xx answers, spread evenly over 500, 502, 503 and 529, adding up to `total`. */
function transient(total: number): ModelFaults {
  const each = total / 4;
  return { rates: { server_error: each, bad_gateway: each, unavailable: each, overloaded: each } };
}

/** The goals every scenario is held to. */
const SAFETY = ['duplicates', 'typed'] as const;
/** The goals of a scenario whose faults a resilient agent recovers from within the run: completion, and safety. */
const RECOVERABLE = ['completion', ...SAFETY] as const;

/** What the child agent's models meet in the nested scenarios: 429s, 5xx and hangs, 25% of its requests in all. */
const NESTED_CHILD_FAULTS: ModelFaults = {
  rates: {
    rate_limit: 0.1,
    server_error: 0.025,
    bad_gateway: 0.025,
    unavailable: 0.025,
    overloaded: 0.025,
    hang: 0.05,
  },
  retryAfterMs: 250,
  hangMs: 1_500,
};

/** The built-in scenarios, in the order they run. */
export const SCENARIOS: readonly ChaosScenario[] = Object.freeze([
  {
    name: 'transient-10',
    title: 'transient 5xx on 10% of requests',
    description: '500, 502 (an HTML page), 503 and 529 answers on 10% of the requests to every model.',
    primary: transient(0.1),
    fallbacks: transient(0.1),
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'transient-30',
    title: 'transient 5xx on 30% of requests',
    description: '500, 502 (an HTML page), 503 and 529 answers on 30% of the requests to every model.',
    primary: transient(0.3),
    fallbacks: transient(0.3),
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: ['completion', 'amplification', ...SAFETY],
  },
  {
    name: 'rate-limit-storm',
    title: '429 storm with Retry-After on the primary',
    description:
      'Every request to the primary model gets 429 with Retry-After for 1 s (a minute-long storm with a 5 s ' +
      'Retry-After, compressed 20x: the header asks for 250 ms); the fallbacks are healthy.',
    primary: { outages: [{ startMs: 200, endMs: 1_200, fault: 'rate_limit' }], retryAfterMs: 250 },
    arrivalMs: 1_500,
    minimum: 'clean',
    goals: ['completion', 'probes', ...SAFETY],
  },
  {
    name: 'outage-fallback',
    title: 'primary outage, fallback available',
    description:
      'The primary model answers 503 to every request for 1.5 s (a minute-long outage compressed 40x) while runs ' +
      'keep arriving; the fallbacks are healthy.',
    primary: { outages: [{ startMs: 300, endMs: 1_800, fault: 'unavailable' }] },
    arrivalMs: 2_500,
    minimum: 'clean',
    goals: ['completion', 'probes', ...SAFETY],
  },
  {
    name: 'outage-no-fallback',
    title: 'primary outage, no fallback',
    description:
      'The same 1.5 s outage of the primary model, and the subject runs without its fallbacks: the runs that ' +
      'meet the outage cannot complete; what counts is how fast they fail and how hard the dead provider is hit.',
    primary: { outages: [{ startMs: 300, endMs: 1_800, fault: 'unavailable' }] },
    fallbacksOffered: false,
    arrivalMs: 2_500,
    minimum: 'clean',
    goals: ['probes', ...SAFETY],
  },
  {
    name: 'hang',
    title: 'responses that never start',
    description:
      '10% of the requests to every model get no byte at all until the connection is cut after 1.5 s (a load ' +
      "balancer's 60 s idle timeout, compressed 40x).",
    primary: { rates: { hang: 0.1 }, hangMs: 1_500 },
    fallbacks: { rates: { hang: 0.1 }, hangMs: 1_500 },
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'reset',
    title: 'connections reset mid-response',
    description: '20% of the responses of every model send their headers and part of the body, then reset.',
    primary: { rates: { reset: 0.2 } },
    fallbacks: { rates: { reset: 0.2 } },
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'stream-cut',
    title: 'streamed answers cut mid-way',
    description:
      '20% of the streamed answers of every model are reset at a random byte offset: inside the text, inside a ' +
      "tool call's arguments, between events. The runs stream.",
    primary: { rates: { stream_cut: 0.2 } },
    fallbacks: { rates: { stream_cut: 0.2 } },
    stream: true,
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'stall',
    title: 'streamed answers that stall, or drip',
    description:
      '10% of the streamed answers of every model send their headers and part of the answer, then nothing until ' +
      "the connection is cut after 1.5 s (a proxy's 60 s idle timeout, compressed 40x); another 10% drip one event " +
      'every 100 ms (slow but alive: not to be cut). The runs stream.',
    primary: { rates: { stall: 0.1, slow_drip: 0.1 }, hangMs: 1_500 },
    fallbacks: { rates: { stall: 0.1, slow_drip: 0.1 }, hangMs: 1_500 },
    stream: true,
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'empty-stream',
    title: 'streamed answers with nothing in them',
    description:
      '20% of the streamed answers of every model are `data: {"choices":[]}` then `data: [DONE]`: no choice, no ' +
      'text, no finish reason. The runs stream.',
    primary: { rates: { empty_stream: 0.2 } },
    fallbacks: { rates: { empty_stream: 0.2 } },
    stream: true,
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'malformed-tool-calls',
    title: 'malformed tool-call JSON and unknown tool names',
    description:
      '15% of the answers of every model call a tool with arguments that are not JSON, 15% name a tool that was ' +
      'not offered.',
    primary: { rates: { invalid_tool_arguments: 0.15, unknown_tool: 0.15 } },
    fallbacks: { rates: { invalid_tool_arguments: 0.15, unknown_tool: 0.15 } },
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'context-overflow',
    title: 'the conversation outgrows the primary context window',
    description:
      "The primary model's window lies between the first prompt of a fault-free run and its largest: the run " +
      'overflows it mid-way (400 context_length_exceeded). The fallbacks have a window four times the largest.',
    tightContextWindow: true,
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'max-tokens',
    title: 'answers cut at the output limit',
    description: '15% of the answers of every model stop with finish_reason "length" and partial content.',
    primary: { rates: { max_tokens: 0.15 } },
    fallbacks: { rates: { max_tokens: 0.15 } },
    arrivalMs: 1_000,
    minimum: 'schedule',
    goals: RECOVERABLE,
  },
  {
    name: 'tool-flaky',
    title: 'a tool that fails intermittently',
    description: '30% of tool calls fail before doing anything: the service behind the tool answers 503.',
    tools: { failRate: 0.3 },
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'tool-hang',
    title: 'a tool that hangs',
    description: '20% of tool calls never return until their signal aborts them.',
    tools: { hangRate: 0.2 },
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'tool-timeout-recall',
    title: 'a side effect that times out after it happened, and a model that calls it again',
    description:
      'Half the calls of every tool that is not idempotent (create_ticket) take effect and then time out (the ' +
      "service acted; its answer is lost and the client's own timeout fires), and the model calls a failed call " +
      'again with the same arguments, up to twice, whatever the error says. A duplicate is a second execution of ' +
      'the same call: a second ticket.',
    tools: { timeoutAfterEffectRate: 0.5 },
    recallFailedCalls: true,
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'crash',
    title: 'the worker process is killed mid-run',
    description:
      'The runs execute in a worker process that is killed with SIGKILL while they are under way; a new worker ' +
      'then resumes them from their last checkpoint (durable agents) or starts them again (the others).',
    crash: true,
    arrivalMs: 300,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'quota',
    title: 'a provider rate limit shared by a fleet of 3 processes',
    description:
      'The server enforces a rate limit per API key, as OpenAI does: 20 requests and 5,000 tokens (prompt plus ' +
      'max_tokens) per 2 s window (a per-minute limit compressed 30x), with the x-ratelimit-* headers on every ' +
      'answer and 429 with retry-after-ms past either. The runs execute in 3 worker processes that share the key and ' +
      'start together, all arriving within 1 s: more than a window allows.',
    quota: { requestsPerWindow: 20, tokensPerWindow: 5_000, windowMs: 2_000 },
    workers: 3,
    fallbacksOffered: false,
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: ['completion', 'refusals', ...SAFETY],
  },
  {
    name: 'nested',
    title: "faults in a child agent's model and tools",
    description:
      'A parent agent hands the task to a child agent called as a tool. The parent is left alone; the child meets ' +
      'the faults: 10% of its requests get 429 (Retry-After 250 ms), 10% get 500, 502, 503 or 529, 5% hang until ' +
      'the connection is cut after 1.5 s, and 10% of its tool calls fail before doing anything (503). A child that ' +
      'cannot finish should reach the parent as a tool error saying why.',
    child: NESTED_CHILD_FAULTS,
    tools: { failRate: 0.1 },
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'nested-crash',
    title: 'the worker process is killed while child agents run',
    description:
      'The nested runs (a parent agent calling a child agent as a tool) execute in a worker process killed with ' +
      "SIGKILL once 20-50% of the child's tool calls have happened; a new worker resumes the parents from their " +
      'checkpoints, and with them the children (durable agents), or starts them again (the others). A duplicate is ' +
      "a child's ticket opened twice.",
    child: {},
    crash: true,
    arrivalMs: 300,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
  {
    name: 'nested-handoff',
    title: 'a handoff to a child agent that meets faults',
    description:
      'The parent agent hands the conversation over to a child agent, which answers (a handoff, not a tool call); ' +
      "the child's model and tools meet the faults of `nested`. A child that cannot finish should reach the parent " +
      'as a tool error saying why, so that the parent can answer itself.',
    child: NESTED_CHILD_FAULTS,
    handoff: true,
    tools: { failRate: 0.1 },
    arrivalMs: 1_000,
    minimum: 'clean',
    goals: RECOVERABLE,
  },
] satisfies ChaosScenario[]);

/** The names of the built-in scenarios. */
export const SCENARIO_NAMES: readonly string[] = SCENARIOS.map((scenario) => scenario.name);

/**
 * The scenarios to run: each entry names a built-in scenario or one of `defined` (scenarios from outside, such as a
 * scenarios file), or is a scenario definition itself. Built-in scenarios come first, in the suite's order, then the
 * others in the order given. Every built-in scenario when `names` is undefined. Throws a `config.invalid` KeelError
 * naming an unknown one.
 */
export function selectScenarios(
  names?: readonly (string | ChaosScenario)[],
  defined: readonly ChaosScenario[] = [],
): ChaosScenario[] {
  if (names === undefined) return [...SCENARIOS];
  const known = [...SCENARIO_NAMES, ...defined.map((scenario) => scenario.name)];
  if (!Array.isArray(names) || names.length === 0) {
    throw new KeelError('config.invalid', `Name at least one scenario (${known.join(', ')})`);
  }
  const others: ChaosScenario[] = [];
  for (const entry of names) {
    if (typeof entry === 'object' && entry !== null) {
      others.push(entry);
      continue;
    }
    if (SCENARIO_NAMES.includes(entry)) continue;
    const found = defined.find((scenario) => scenario.name === entry);
    if (found === undefined) {
      throw new KeelError(
        'config.invalid',
        `Unknown chaos scenario "${String(entry)}"; the scenarios are: ${known.join(', ')}`,
      );
    }
    others.push(found);
  }
  return [...SCENARIOS.filter((scenario) => names.includes(scenario.name)), ...others];
}
