import { randomUUID } from 'node:crypto';
import { KeelError } from '../errors/keel-error.js';
import type { Message, Usage } from '../spec/model.js';
import { combineBudgets } from './budget.js';
import { RunAbort, type RunRegistry } from './cancellation.js';
import { type RunEventListener, RunEventSink } from './events.js';
import type { RunReport } from './report.js';
import { type AgentRuntime, RunContext } from './run-context.js';
import { runLoop } from './run-loop.js';
import { createRunState, type RunState, type StopReason, type TerminalStatus } from './run-state.js';

/** Options of one run. */
export interface RunOptions {
  /** Cancels the run when it aborts: the run ends as `cancelled` with `run.cancelled`. Defaults to none. */
  signal?: AbortSignal;
  /** The run's id, for `cancel(runId)`, events and stores; must not be in use. Defaults to a random UUID. */
  runId?: string;
  /** Receives this run's events (besides the agent's subscribers). Defaults to none. */
  onEvent?: RunEventListener;
  /**
   * Receives the answer's text as it streams; setting it makes the model stream. Once a delta has been delivered a
   * failing model call is not retried or replayed: the run fails with the error, `data.partialOutput` holding what
   * was streamed. Defaults to none (no streaming).
   */
  onTextDelta?: (delta: string) => void;
}

/** How a run ended. A run always resolves with one; it never rejects (except for invalid arguments to `run`). */
export interface RunResult<Output = string> {
  readonly runId: string;
  readonly status: TerminalStatus;
  readonly stopReason: StopReason;
  /** More about the stop reason, such as the reason a tool gave with `stopRun`. */
  readonly stopDetail?: string;
  /** The answer (the validated value with an output schema; a `stopRun` output), when the run completed with one. */
  readonly output: Output | undefined;
  /** The whole conversation, the system message first. */
  readonly messages: Message[];
  readonly usage: Usage;
  /** Why the run failed, was cancelled or interrupted. */
  readonly error?: KeelError;
  readonly report: RunReport;
  /** The run's final state, as a checkpoint would hold it (plain JSON). */
  readonly state: RunState;
}

const RUN_OPTIONS = ['signal', 'runId', 'onEvent', 'onTextDelta'];

/**
 * Runs the agent once. Invalid arguments throw `config.invalid` before anything starts; from then on every outcome
 * is a {@link RunResult}.
 */
export async function executeRun<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  input: string | readonly Message[],
  options: RunOptions = {},
): Promise<RunResult<Output>> {
  checkOptions(options);
  const messages = initialMessages(runtime, input);
  const { clock, limits } = runtime;
  const startedAtMs = clock.now();
  const state = createRunState({
    runId: options.runId ?? randomUUID(),
    agentName: runtime.name,
    messages,
    startedAtMs,
    deadlineAtMs: startedAtMs + limits.timeoutMs,
  });
  return driveRun<Output>(runtime, registry, agentRuns, state, options, true);
}

/**
 * Drives a run's state to its end: a new run's (`fresh`), or one restored from a checkpoint, which goes on from its
 * phase, keeping its deadline. Registers the run for cancellation while it runs.
 */
export async function driveRun<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  state: RunState,
  options: RunOptions,
  fresh: boolean,
): Promise<RunResult<Output>> {
  const { clock, limits } = runtime;
  const runId = state.runId;
  const abort = new RunAbort(runId, clock);
  registry.register(abort);
  agentRuns.set(runId, abort);
  const budget = combineBudgets(runtime.retry.createRunBudget(clock), runtime.retry.sharedBudget);
  const events = new RunEventSink(runtime.events, options.onEvent);
  const run = new RunContext(runtime, state, abort, events, budget, options.onTextDelta);
  try {
    abort.follow(options.signal);
    abort.deadline(state.deadlineAtMs, limits.timeoutMs);
    const ending = await runLoop(run, fresh);
    return {
      runId,
      status: ending.status,
      stopReason: ending.stopReason,
      ...(ending.stopDetail === undefined ? {} : { stopDetail: ending.stopDetail }),
      output: ending.output as Output | undefined,
      messages: state.messages,
      usage: { ...state.usage },
      ...(ending.error === undefined ? {} : { error: ending.error }),
      report: state.report,
      state,
    };
  } finally {
    run.dispose();
    registry.unregister(abort);
    if (agentRuns.get(runId) === abort) agentRuns.delete(runId);
  }
}

function checkOptions(options: RunOptions): void {
  if (typeof options !== 'object' || options === null)
    invalid('options must be an object such as { signal }');
  for (const key of Object.keys(options)) {
    if (!RUN_OPTIONS.includes(key))
      invalid(`unknown option "${key}"; known options: ${RUN_OPTIONS.join(', ')}`);
  }
  const { signal, runId, onEvent, onTextDelta } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) invalid('signal must be an AbortSignal');
  if (runId !== undefined && (typeof runId !== 'string' || runId.trim() === '' || runId.length > 200)) {
    invalid('runId must be a non-empty string of at most 200 characters');
  }
  if (onEvent !== undefined && typeof onEvent !== 'function') invalid('onEvent must be a function');
  if (onTextDelta !== undefined && typeof onTextDelta !== 'function')
    invalid('onTextDelta must be a function');
}

/** The conversation a run starts from: the instructions, then the input (a prompt, or earlier messages). */
function initialMessages(runtime: AgentRuntime, input: string | readonly Message[]): Message[] {
  const messages: Message[] = [];
  const instructions = runtime.instructions;
  if (typeof input === 'string') {
    if (instructions !== undefined) messages.push({ role: 'system', content: instructions });
    messages.push({ role: 'user', content: input });
    return messages;
  }
  if (!Array.isArray(input) || input.length === 0) {
    invalid('input must be a string, or a non-empty array of messages ({ role, content })');
  }
  input.forEach((message, index) => {
    const role = (message as { role?: unknown })?.role;
    if (
      !['system', 'user', 'assistant', 'tool'].includes(role as string) ||
      typeof message.content !== 'string'
    ) {
      invalid(
        `input[${index}] must be a message with role system, user, assistant or tool, and string content`,
      );
    }
  });
  if (instructions !== undefined && input[0]!.role !== 'system')
    messages.push({ role: 'system', content: instructions });
  for (const message of input) messages.push(message);
  return messages;
}

function invalid(message: string): never {
  throw new KeelError('config.invalid', `run: ${message}`, { data: { where: 'run' } });
}
