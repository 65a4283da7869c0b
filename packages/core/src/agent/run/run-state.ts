import type { JsonValue } from '../../errors/keel-error.js';
import type { SerializedError } from '../../errors/serialize.js';
import type { FinishReason, Message, ModelResponse, ToolCall, ToolChoice, Usage } from '../../spec/model.js';
import type { ToolResult } from '../../spec/tool.js';
import type { CorrectionTrackerState } from '../correction/correction-tracker.js';
import type { ToolStop } from './directives.js';
import type { EventJournal } from './event-journal.js';
import type { ApprovalAnswer, PendingDecision } from './pending-decision.js';
import { createReport, type RunReport } from './report.js';
import type { SessionRunState } from './session-state.js';
import type { StopReason, TerminalStatus } from './stop-reason.js';

/**
 * The version of {@link RunState}'s shape. Raised with every incompatible change; stores keep it for migrations (see
 * `migrateRunState`). Version 2 added the durable fields: the `answer` phase, `finishReason`, each call's `attempts`,
 * `approval` and `decision`, `pendingDecisions` and `checkpointedAtMs`. Version 3 added the report's `degradations`
 * (tool results answered by a fallback).
 *
 * Optional fields whose absence means "none", which an older keel keeps as they are (messages and usage are stored
 * and saved again whole), do not raise it: assistant messages' `reasoning` blocks, tool calls' `providerMetadata`,
 * and `usage.reasoningTokens` (in the state and its report) came that way, within version 3, and so did `annotations`,
 * the durable run's `journal` (a state without one has simply none), `uncertainCalls` and the report's
 * `uncertainCalls`.
 */
export const RUN_STATE_SCHEMA_VERSION = 3;

/**
 * What the loop does next: ask the model, settle the answer it gave (no tool calls: the final answer, or a cut one to
 * continue), run the pending tool calls, or nothing (the run has ended).
 */
export type RunPhase = 'model' | 'answer' | 'tools' | 'ended';

/** One tool call of the current step, with its result once it completed. */
export interface PendingToolCall {
  readonly callIndex: number;
  readonly call: ToolCall;
  /** `${runId}:${step}:${callIndex}`: stable across retries and resumes, never the model's call id. */
  readonly idempotencyKey: string;
  /** `started` without `completed` means the call may or may not have run (what resume must decide about). */
  status: 'pending' | 'started' | 'completed';
  result?: ToolResult;
  /** The stop the tool asked for (`stopRun`) with its result: a run resumed after the call completed stops too. */
  stop?: ToolStop;
  /** Executions of the call begun so far, retries and executions before a resume included. */
  attempts: number;
  /** A human's answer, for a tool that needs approval. */
  approval?: ApprovalAnswer;
  /** `execute`: the user chose to run again a call that may already have run (see `resume`'s `decisions`). */
  decision?: 'execute';
}

/** An earlier call whose outcome is unknown (see `RunState.uncertainCalls`). */
export interface UncertainCall {
  /** The idempotency key it was executed with: what its tool's `reconcile` looks up. */
  readonly idempotencyKey: string;
  readonly toolName: string;
  /** Its arguments as canonical JSON (object keys sorted): a repeat has the same text. */
  readonly argumentsKey: string;
  readonly step: number;
  readonly callIndex: number;
  /**
   * What made its outcome unknown: its failure's code (`tool.timeout`, `network.timeout`, `network.connection`, ...),
   * or `run.interrupted` for a call the process died in that a person abandoned on resume.
   */
  readonly errorCode: string;
}

/**
 * The whole state of a run as one plain JSON-serialisable object. The loop advances it only through the transition
 * functions below and calls its checkpoint hook after each, so a store can save it and a later version can resume a
 * run from any checkpoint: the loop reads `phase` (and `pendingToolCalls`) to know what comes next.
 */
export interface RunState {
  schemaVersion: typeof RUN_STATE_SCHEMA_VERSION;
  runId: string;
  agentName: string;
  /** `running` until the run reaches one of the four terminal states. */
  status: 'running' | TerminalStatus;
  phase: RunPhase;
  /** The current step, from 1; 0 before the first model call. One step is one model call and its tool calls. */
  step: number;
  /** The conversation, the system instructions first when there are any. */
  messages: Message[];
  /** The current step's tool calls, in the model's order (empty outside the `tools` phase). */
  pendingToolCalls: PendingToolCall[];
  /** Why the last model response stopped; the `answer` phase settles the answer by it. */
  finishReason?: FinishReason;
  /** What an `interrupted` run waits for: approvals, and decisions about calls that may have run. */
  pendingDecisions: PendingDecision[];
  /**
   * Earlier calls of this run, of tools that are not idempotent, whose outcome is unknown (they timed out or lost
   * their connection after they may have taken effect, or were abandoned after a crash): a later call of the same
   * tool with the same arguments is reconciled or decided, never executed blindly. Absent when there are none.
   */
  uncertainCalls?: UncertainCall[];
  /** Which model of the chain (0 is the primary) answers; a run that fell back stays on its fallback. */
  modelIndex: number;
  usage: Usage;
  /** Output text gathered over `onMaxTokens: 'continue'` continuations, not yet complete. */
  partialOutput: string;
  /** Continuations asked for in a row. */
  continuations: number;
  /** Times structured output failed validation and was sent back. */
  outputCorrections: number;
  /** The correction tracker's state (invalid calls in a row, fingerprints), once the model made an invalid call. */
  corrections?: CorrectionTrackerState;
  /** The final output: the text, or the validated value with an output schema. */
  output?: JsonValue;
  stopReason?: StopReason;
  /** More about the stop reason, such as the reason a tool gave with `stopRun`. */
  stopDetail?: string;
  error?: SerializedError;
  startedAtMs: number;
  /** When the run timeout elapses (ms since the epoch); kept so a resumed run keeps its deadline. */
  deadlineAtMs: number;
  endedAtMs?: number;
  /** When the state was last saved to a run store (the agent's clock); time since then does not count on resume. */
  checkpointedAtMs?: number;
  /**
   * The tenant the run spends for (the run option `tenant`): its tenant budgets and metrics. Absent for a run with
   * none (it counts as tenant `default`).
   */
  tenant?: string;
  /** The run's pace priority (the run option `priority`): absent for the default, 0. */
  priority?: number;
  /** What observers keep with the run (see `RunAnnotations`); absent until one adds an entry. keel never reads it. */
  annotations?: Record<string, string>;
  /**
   * A durable run's timed events (model calls, retries with their waits, fallbacks, breaker moves, corrections, its
   * ends and resumptions), the last `EVENT_JOURNAL_LIMIT` (500) kept, for timelines. Absent in a run without a
   * store, and in states saved by a keel before it.
   */
  journal?: EventJournal;
  report: RunReport;
  /**
   * Set for a run on a session: which session, at which version, and which messages are the run's own (appended to
   * the session when it completes). An optional field, so states without it need no migration.
   */
  session?: SessionRunState;
  /**
   * The run's tool choice when it is not the agent's: the run's own `toolChoice`, or `auto` once the model called a
   * tool after a forcing choice. Absent otherwise (the agent's applies).
   */
  toolChoice?: ToolChoice;
  /** For a child run (started by an agent tool or a handoff): the run that started it. Absent for a top-level run. */
  parentRunId?: string;
  /** For a child run: the idempotency key of the parent's tool call that started it. Absent for a top-level run. */
  parentCallKey?: string;
  /** The child runs this run started (agent tools, handoffs), in the order they started. Absent until one starts. */
  children?: ChildRunEntry[];
}

/** A child run as its parent's state lists it. */
export interface ChildRunEntry {
  readonly runId: string;
  readonly agentName: string;
  /** The tool through which the parent started it (`transfer_to_*` for a handoff). */
  readonly toolName: string;
  /** `tool`: an agent tool, whose output came back to the parent's model; `handoff`: it answered for the parent. */
  readonly kind: 'tool' | 'handoff';
  /** The parent's tool call that started it. */
  readonly idempotencyKey: string;
  /** `running` until the parent saw it end. */
  status: 'running' | TerminalStatus;
  stopReason?: string;
  errorCode?: string;
}

/** A move of the run's state, handed to the checkpoint hook right after it happened. */
export type RunTransition =
  | { readonly kind: 'run-started' }
  | { readonly kind: 'run-resumed'; readonly step: number }
  | { readonly kind: 'model-response-received'; readonly step: number }
  | { readonly kind: 'context-reduced'; readonly step: number }
  | {
      readonly kind: 'tool-call-started' | 'tool-call-completed';
      readonly step: number;
      readonly callIndex: number;
      readonly idempotencyKey: string;
      readonly toolName: string;
    }
  | { readonly kind: 'step-ended'; readonly step: number }
  | { readonly kind: 'run-ended'; readonly status: TerminalStatus };

/**
 * Called after every transition with the live state (serialise it before returning; it changes afterwards). A
 * returned promise is awaited before the run goes on. Defaults to none: with no store there is nothing to save.
 */
export type CheckpointHook = (
  transition: RunTransition,
  state: Readonly<RunState>,
) => void | PromiseLike<void>;

/** A new run's state. */
export function createRunState(options: {
  runId: string;
  agentName: string;
  messages: Message[];
  startedAtMs: number;
  deadlineAtMs: number;
}): RunState {
  return {
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    runId: options.runId,
    agentName: options.agentName,
    status: 'running',
    phase: 'model',
    step: 0,
    messages: options.messages,
    pendingToolCalls: [],
    pendingDecisions: [],
    modelIndex: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    partialOutput: '',
    continuations: 0,
    outputCorrections: 0,
    startedAtMs: options.startedAtMs,
    deadlineAtMs: options.deadlineAtMs,
    report: createReport(),
  };
}

/** The idempotency key of a tool call: derived from the run, the step and the call's position, never the model's id. */
export function idempotencyKeyOf(runId: string, step: number, callIndex: number): string {
  return `${runId}:${step}:${callIndex}`;
}

/** The counts of `Usage` a provider may leave out: summed only once one reported them, so that absent stays absent. */
const OPTIONAL_USAGE_FIELDS = ['reasoningTokens', 'cachedInputTokens', 'cacheWriteInputTokens'] as const;

/** Transition: a new step begins (before its model call). */
export function beginStep(state: RunState): void {
  state.step++;
  state.report.steps++;
}

/**
 * Transition `model-response-received`: the assistant's message joins the conversation and its tool calls become the
 * step's pending calls (phase `tools`), or the phase becomes `answer` for the loop to settle the answer. Either way a
 * resumed run goes on from the response: a checkpointed response is never requested again.
 */
export function recordModelResponse(state: RunState, response: ModelResponse): void {
  state.usage.inputTokens += response.usage.inputTokens;
  state.usage.outputTokens += response.usage.outputTokens;
  state.report.usage.inputTokens = state.usage.inputTokens;
  state.report.usage.outputTokens = state.usage.outputTokens;
  for (const field of OPTIONAL_USAGE_FIELDS) {
    const tokens = response.usage[field];
    if (tokens !== undefined && Number.isFinite(tokens)) {
      state.usage[field] = (state.usage[field] ?? 0) + tokens;
      state.report.usage[field] = state.usage[field];
    }
  }
  if (state.usage.cachedInputTokens !== undefined) {
    state.report.promptCacheHitRate =
      state.usage.inputTokens === 0 ? 0 : state.usage.cachedInputTokens / state.usage.inputTokens;
  }
  const message: Extract<Message, { role: 'assistant' }> =
    response.toolCalls.length > 0
      ? { role: 'assistant', content: response.content, toolCalls: response.toolCalls }
      : { role: 'assistant', content: response.content };
  // Thinking blocks stay with their answer: Anthropic asks for them again, signatures intact, with the tool results.
  if (response.reasoning !== undefined && response.reasoning.length > 0)
    message.reasoning = response.reasoning;
  state.messages.push(message);
  state.finishReason = response.finishReason;
  if (response.toolCalls.length === 0) {
    state.phase = 'answer';
    return;
  }
  const pending: PendingToolCall[] = new Array(response.toolCalls.length);
  for (let callIndex = 0; callIndex < response.toolCalls.length; callIndex++) {
    pending[callIndex] = {
      callIndex,
      call: response.toolCalls[callIndex]!,
      idempotencyKey: idempotencyKeyOf(state.runId, state.step, callIndex),
      status: 'pending',
      attempts: 0,
    };
  }
  state.pendingToolCalls = pending;
  state.phase = 'tools';
}

/**
 * Transition `tool-call-started`: from here on the call may have run (an execution begins). A user's `execute`
 * decision is spent by the execution it allowed: should this one be cut short too, the call is uncertain again.
 */
export function recordToolCallStarted(call: PendingToolCall): void {
  call.status = 'started';
  call.attempts++;
  if (call.decision !== undefined) delete call.decision;
}

/**
 * Transition `tool-call-completed`: the call's result is known (success or error, as data), and the stop the tool
 * asked for, if it did.
 */
export function recordToolCallCompleted(call: PendingToolCall, result: ToolResult, stop?: ToolStop): void {
  call.status = 'completed';
  call.result = result;
  if (stop !== undefined) call.stop = stop;
}

/**
 * Transition `step-ended`: the step's tool messages (in call order, whatever order the calls finished in) join the
 * conversation, followed by any extra messages (guidance), and the loop asks the model again.
 */
export function endStep(
  state: RunState,
  toolMessages: readonly Message[],
  extraMessages: readonly Message[],
): void {
  for (const message of toolMessages) state.messages.push(message);
  for (const message of extraMessages) state.messages.push(message);
  state.pendingToolCalls = [];
  state.phase = 'model';
}

/**
 * Transition `run-ended`: the terminal status, stop reason, output or error, and the report's final figures. An
 * interrupted run keeps its phase and pending calls, and records what it waits for, so that it can be resumed.
 */
export function endRun(
  state: RunState,
  ending: {
    status: TerminalStatus;
    stopReason: StopReason;
    stopDetail?: string;
    output?: JsonValue;
    error?: SerializedError;
    pending?: readonly PendingDecision[];
  },
  nowMs: number,
): void {
  state.status = ending.status;
  state.stopReason = ending.stopReason;
  if (ending.status === 'interrupted') {
    state.pendingDecisions = ending.pending === undefined ? [] : [...ending.pending];
  } else {
    state.phase = 'ended';
    state.pendingToolCalls = [];
    state.pendingDecisions = [];
  }
  if (ending.stopDetail !== undefined) state.stopDetail = ending.stopDetail;
  if (ending.output !== undefined) state.output = ending.output;
  if (ending.error !== undefined) state.error = ending.error;
  state.endedAtMs = nowMs;
  state.report.durationMs = nowMs - state.startedAtMs;
}
