import { contentPartsProblem } from '../../content/content-parts.js';
import type { KeelError } from '../../errors/keel-error.js';
import { isPacePriority } from '../../governance/pace-options.js';
import { optionError } from '../../options/option-error.js';
import type { Message, ToolChoice, Usage } from '../../spec/model.js';
import type { RunEventListener } from '../../spec/run-events.js';
import type { DurableRun } from '../durability/durable-run.js';
import type { AgentRuntime } from '../run/agent-runtime.js';
import { RunAbort, type RunRegistry } from '../run/cancellation.js';
import { type ForwardedAnswers, parentRunIn } from '../run/child-runs.js';
import { journalingListener } from '../run/event-journal.js';
import { RunEventSink } from '../run/event-sink.js';
import type { PendingDecision } from '../run/pending-decision.js';
import type { RunReport } from '../run/report.js';
import { RunContext } from '../run/run-context.js';
import type { RunState } from '../run/run-state.js';
import type { SessionBusy } from '../run/session-options.js';
import type { RunSessionOutcome } from '../run/session-state.js';
import type { StopReason, TerminalStatus } from '../run/stop-reason.js';
import { toolChoiceProblem } from '../tools/tool-choice.js';
import { combineBudgets } from './budget.js';
import type { RunEnding } from './run-ending.js';
import { runLoop } from './run-loop.js';

/** Options of one run. */
export interface RunOptions {
  /** Cancels the run when it aborts: the run ends as `cancelled` with `run.cancelled`. Defaults to none. */
  signal?: AbortSignal;
  /**
   * The run's id, for `cancel(runId)`, `resume(runId)`, events and stores; must not be in use. Defaults to
   * `newRunId()`, a time-ordered UUID.
   */
  runId?: string;
  /** Receives this run's events (besides the agent's subscribers). Defaults to none. */
  onEvent?: RunEventListener;
  /**
   * Receives the answer's text as it streams; setting it makes the model stream. A model call that breaks after a
   * delta was delivered is retried (the agent's `streamRecovery`, on by default) and no text is delivered twice: the
   * new answer's text goes on after what was delivered (`stream-recovered`, `continued`) or, when it departs from it,
   * starts again (`restarted`: the step's text so far is void; listen to `onEvent` to know). With `streamRecovery:
   * false` the run fails with the error, `data.partialOutput` holding what was streamed. Defaults to none (no
   * streaming).
   */
  onTextDelta?: (delta: string) => void;
  /**
   * Runs on this session (the agent needs a `store`): the session's conversation so far comes before the input (bounded
   * by the conversation manager; the store keeps it all), and the run's turns are appended to it when the run completes
   * (a failed or cancelled run appends nothing; an interrupted one, when a resume completes it). 1 to 128 characters:
   * letters, digits and `. _ : @ -`. Defaults to none (the run stands alone).
   */
  sessionId?: string;
  /**
   * When another run is going on the session: `wait` for it to end (up to `sessionWaitMs`), or `fail` at once with
   * `store.conflict`. A session held by an interrupted run, or by one whose process stopped, is refused at once either
   * way. Defaults to `wait`.
   */
  sessionBusy?: SessionBusy;
  /** Longest wait for a busy session, in milliseconds (0 to 3_600_000), then `store.conflict`. Defaults to 30_000. */
  sessionWaitMs?: number;
  /**
   * This run's tool choice, instead of the agent's `toolChoice` (see there: a forcing choice holds until the model
   * called a tool; an unknown tool name is `config.invalid`). Kept in the run's state, so a resumed run keeps it.
   * Defaults to the agent's.
   */
  toolChoice?: ToolChoice;
  /**
   * The tenant the run spends for: the agent's `tenant` budgets bound it, and metrics label it (bounded: see
   * `@keel/telemetry`). 1 to 64 characters: letters, digits and `. _ : @ -`. Defaults to none (tenant `default`).
   */
  tenant?: string;
  /**
   * The run's priority with the agent's pace governor (`pace`): when calls wait for a slot of a provider's window, a
   * higher priority goes first (before fair shares between tenants apply). An integer from -10 to 10. Defaults to 0.
   */
  priority?: number;
}

/**
 * How a run ended. A run always resolves with one; it rejects only before it starts: for invalid arguments to `run`
 * (`config.invalid`), and under the agent's `tenants` limits when its tenant's queue is full or its wait runs out
 * (`policy.bulkhead_full`) or its `signal` aborts while it waits (`run.cancelled`).
 */
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
  /**
   * What an interrupted run waits for: approvals of tool calls (`approval`), and decisions about calls that may or
   * may not have run (`uncertain`), each keyed by the call's idempotency key. Absent when there are none.
   */
  readonly pending?: PendingDecision[];
  /**
   * Whether `agent.resume(runId)` can go on with the run: true when it is `interrupted` (decisions pending, its store
   * failed, or another process took it over) and stored.
   */
  readonly resumable: boolean;
  /** For a run on a session: what became of its turns. Absent for a run on no session. */
  readonly session?: RunSessionOutcome;
}

/** What `driveRun` is handed when the run was set up before it (a durable run): its abort switch and store. */
export interface PreparedRun {
  /** Already registered in the registry. */
  readonly abort: RunAbort;
  readonly durable: DurableRun;
  /** Answers its `resume` was given for its children's pending calls, passed down to them. */
  readonly childAnswers?: ForwardedAnswers;
}

const RUN_OPTIONS = [
  'signal',
  'runId',
  'onEvent',
  'onTextDelta',
  'sessionId',
  'sessionBusy',
  'sessionWaitMs',
  'toolChoice',
  'tenant',
  'priority',
];

/**
 * Drives a run's state to its end: a new run's (`fresh`), or one restored from a checkpoint, which goes on from its
 * phase, keeping its deadline. Registers the run for cancellation while it runs (a `prepared` run is registered
 * already). A durable run's lease is released at the end.
 */
export async function driveRun<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  state: RunState,
  options: RunOptions,
  fresh: boolean,
  prepared?: PreparedRun,
): Promise<RunResult<Output>> {
  const { clock, limits } = runtime;
  const runId = state.runId;
  const abort = prepared?.abort ?? new RunAbort(runId, clock);
  if (prepared === undefined) registry.register(abort);
  agentRuns.set(runId, abort);
  const durable = prepared?.durable;
  const parent = parentRunIn(options);
  // A child run draws from its parent's budget (which draws from the shared one) and keeps within its deadline.
  const budget = combineBudgets(
    runtime.retry.createRunBudget(),
    parent?.budget ?? runtime.retry.sharedBudget,
  );
  if (parent !== undefined && parent.deadlineAtMs < state.deadlineAtMs)
    state.deadlineAtMs = parent.deadlineAtMs;
  const journal = durable === undefined ? undefined : journalingListener(state);
  const events = new RunEventSink(runtime.events, options.onEvent, journal);
  const run = new RunContext(runtime, state, abort, events, budget, options.onTextDelta, durable);
  if (prepared?.childAnswers !== undefined) run.childAnswers = prepared.childAnswers;
  try {
    durable?.attach(run);
    abort.follow(options.signal);
    abort.deadline(state.deadlineAtMs, limits.timeoutMs, runtime.runDeadlines);
    const ending = await runLoop(run, fresh);
    await durable?.close();
    return resultOf<Output>(state, ending, durable !== undefined);
  } finally {
    durable?.stopHeartbeat();
    run.dispose();
    registry.unregister(abort);
    if (agentRuns.get(runId) === abort) agentRuns.delete(runId);
  }
}

/** A run's result from its state and ending. */
export function resultOf<Output>(state: RunState, ending: RunEnding, durable: boolean): RunResult<Output> {
  const pending = ending.pending;
  return {
    runId: state.runId,
    status: ending.status,
    stopReason: ending.stopReason,
    ...(ending.stopDetail === undefined ? {} : { stopDetail: ending.stopDetail }),
    output: ending.output as Output | undefined,
    messages: state.messages,
    usage: { ...state.usage },
    ...(ending.error === undefined ? {} : { error: ending.error }),
    report: state.report,
    state,
    ...(pending === undefined || pending.length === 0 ? {} : { pending: [...pending] }),
    resumable: durable && ending.status === 'interrupted',
  };
}

/** Checks the options of `run` (or, with its own `known` list and `where`, of `resume`): `config.invalid` says what to fix. */
export function checkOptions(
  options: RunOptions,
  known: readonly string[] = RUN_OPTIONS,
  where = 'run',
): void {
  const fail = (message: string) => refuseRunOption(message, where);
  if (typeof options !== 'object' || options === null) fail('options must be an object such as { signal }');
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) fail(`unknown option "${key}"; known options: ${known.join(', ')}`);
  }
  const { signal, runId, onEvent, onTextDelta } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail('signal must be an AbortSignal');
  if (runId !== undefined) checkRunId(runId, where);
  if (onEvent !== undefined && typeof onEvent !== 'function') fail('onEvent must be a function');
  if (onTextDelta !== undefined && typeof onTextDelta !== 'function') fail('onTextDelta must be a function');
  const tenant = (options as { tenant?: unknown }).tenant;
  if (tenant !== undefined && (typeof tenant !== 'string' || !/^[A-Za-z0-9._:@-]{1,64}$/.test(tenant))) {
    fail(`tenant must be 1 to 64 letters, digits or . _ : @ -; got ${JSON.stringify(tenant)}`);
  }
  const priority = (options as { priority?: unknown }).priority;
  if (priority !== undefined && !isPacePriority(priority)) {
    fail(`priority must be an integer from -10 to 10; got ${JSON.stringify(priority)}`);
  }
}

/**
 * Keeps a run's own `toolChoice` in its new state, after checking it against the agent's tools (`config.invalid`
 * when it names a tool the agent does not offer).
 */
export function setRunToolChoice(runtime: AgentRuntime, state: RunState, options: RunOptions): void {
  if (options.toolChoice === undefined) return;
  const problem = toolChoiceProblem(options.toolChoice, runtime.toolNames, runtime.toolCatalog !== undefined);
  if (problem !== undefined) refuseRunOption(problem);
  state.toolChoice = options.toolChoice;
}

/** Refuses (`config.invalid`) the `parts` of an input message that are not well-formed images and files. */
export function checkMessageParts(message: Message, index: number): void {
  const parts = (message as { parts?: unknown }).parts;
  if (parts === undefined) return;
  if (message.role !== 'user') refuseRunOption(`input[${index}]: only a user message may have parts`);
  const problem = contentPartsProblem(parts);
  if (problem !== undefined) refuseRunOption(`input[${index}].${problem}`);
}

/** A run id must be a non-empty string of at most 200 characters. */
export function checkRunId(runId: unknown, where = 'run'): void {
  if (typeof runId !== 'string' || runId.trim() === '' || runId.length > 200) {
    refuseRunOption('runId must be a non-empty string of at most 200 characters', where);
  }
}

/** Throws `config.invalid` for a bad argument of `where` (`run` or `resume`). */
export function refuseRunOption(message: string, where = 'run', option = optionNamed(message)): never {
  throw optionError({ where, option, message });
}

/** The option a refusal message of this file starts with (`input must be ...` is about `input`). */
function optionNamed(message: string): string {
  const first = message.split(' ', 1)[0] ?? '';
  return /^[A-Za-z]\w*$/.test(first) ? first : 'options';
}
