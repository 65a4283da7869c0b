import {
  type CancellationRequest,
  type JsonValue,
  KeelError,
  type LedgerEntry,
  type Message,
  migrateRunState,
  type PendingDecision,
  type QueuedRunState,
  type RunRecord,
  type RunReport,
  type RunState,
  type RunStatus,
  type RunSummary,
  readQueuedState,
  type SerializedError,
  type StopReason,
} from '@keel/core';
import { queuedTimeline } from './queued-timeline.js';
import { buildTimeline, type Timeline } from './timeline.js';

/** Who holds a queued or running run: its lease, as `keel runs list` shows it in its WORKER column. */
export interface RunWorker {
  /** The lease owner: in a fleet, the worker process (its host, pid and a random part). */
  owner: string;
  leaseExpiresAtMs: number;
  /** The lease ran out: its worker died or paused the run, and another worker may take it. */
  leaseEnded: boolean;
}

/** A run as the list shows it: the stored summary and the figures of its report. */
export interface RunRow {
  runId: string;
  agentName: string;
  status: RunStatus;
  version: number;
  createdAtMs: number;
  updatedAtMs: number;
  /** The last user message of the run's input (before the model first answered), cut to 200 characters. */
  task?: string;
  /** Who holds the run, for queued and running runs that someone holds. */
  worker?: RunWorker;
  /**
   * How long the run waited in the fleet's queue: so far, for a queued run; until a worker started it (or it was
   * cancelled) for a run submitted to a fleet. Absent for a run that was never queued.
   */
  queuedMs?: number;
  stopReason?: StopReason;
  errorCode?: string;
  durationMs?: number;
  steps?: number;
  requests?: number;
  retries?: number;
  fallbacks?: number;
  pendingDecisions?: number;
  /** Why the state could not be read (a state from a newer keel, or not a run state): the figures are missing. */
  problem?: string;
}

/** Limits a run is held to, as far as its stored state tells. */
export interface RunBudgets {
  /** When the run times out (ms since the epoch), moved on by the time it spent paused. */
  deadlineAtMs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  retries: number;
  waitingMs: number;
}

/** Everything the run page shows of a run that has started. */
export interface RunView {
  run: RunRow;
  phase: RunState['phase'];
  step: number;
  stopDetail?: string;
  output?: JsonValue;
  error?: SerializedError;
  cancellation?: CancellationRequest;
  report: RunReport;
  budgets: RunBudgets;
  timeline: Timeline;
  messages: Message[];
  ledger: LedgerEntry[];
  pendingDecisions: PendingDecision[];
  /** The run that started this one (an agent tool's or a handoff's child run). */
  parentRunId?: string;
  /** The child runs it started, as it last recorded them: empty when none. */
  children: ChildRunLink[];
  /**
   * The session it is on, with what the session's runs cost so far (`@keel/core`'s `sessionCost`: the runs that
   * appended its turns and the run holding it, added up; `runs` counts them). Absent for a run on no session.
   */
  session?: { sessionId: string; totalUsd: number; byModel: Record<string, number>; runs: number };
}

/** A child run as the run page links to it. */
export interface ChildRunLink {
  runId: string;
  agentName: string;
  /** `tool` (an agent tool) or `handoff`. */
  kind: string;
  toolName: string;
  status: string;
}

/** The run page of a run submitted to a fleet that no worker has started: its input and how long it has waited. */
export interface QueuedRunView {
  run: RunRow;
  queued: { submittedAtMs: number };
  cancellation?: CancellationRequest;
  timeline: Timeline;
  /** The input as the run's conversation will begin (the worker's agent puts its instructions first). */
  messages: Message[];
  ledger: LedgerEntry[];
  pendingDecisions: PendingDecision[];
}

/**
 * What a stored record holds: a run's state, the input of a run no worker has started yet (`keel submit`,
 * `runQueue().submit`: see `queuedRun`), or something this keel cannot read (a state from a newer keel, or not a run
 * state).
 */
export type StoredRun =
  | { kind: 'started'; state: RunState }
  | { kind: 'queued'; queued: QueuedRunState }
  | { kind: 'unreadable'; error: KeelError };

/** Reads a stored record's state. */
export function readStoredRun(record: RunRecord): StoredRun {
  const queued = readQueuedState(record.state);
  if (queued !== undefined) return { kind: 'queued', queued };
  try {
    return { kind: 'started', state: migrateRunState(record.state, record.runId) };
  } catch (error) {
    return {
      kind: 'unreadable',
      error: KeelError.isInstance(error) ? error : new KeelError('store.invalid', String(error)),
    };
  }
}

/** Reads a run's state, or says why it cannot be read (a queued run has none yet). */
export function readState(record: RunRecord): RunState | KeelError {
  const stored = readStoredRun(record);
  if (stored.kind === 'started') return stored.state;
  if (stored.kind === 'unreadable') return stored.error;
  return new KeelError('store.conflict', `Run ${record.runId} is queued: no worker has started it yet`, {
    data: { runId: record.runId, status: record.status },
  });
}

/** Who holds a queued or running run, at `nowMs`; undefined for any other run, or one nobody holds. */
export function workerOf(summary: RunSummary, nowMs: number): RunWorker | undefined {
  if (summary.lease === undefined || (summary.status !== 'running' && summary.status !== 'queued')) {
    return undefined;
  }
  return {
    owner: summary.lease.owner,
    leaseExpiresAtMs: summary.lease.expiresAtMs,
    leaseEnded: summary.lease.expiresAtMs <= nowMs,
  };
}

/** The list row of a run at `nowMs` (the age of running and queued runs, and whether a lease has run out). */
export function runRow(summary: RunSummary, stored: StoredRun, nowMs: number): RunRow {
  const row: RunRow = {
    runId: summary.runId,
    agentName: summary.agentName,
    status: summary.status,
    version: summary.version,
    createdAtMs: summary.createdAtMs,
    updatedAtMs: summary.updatedAtMs,
  };
  const worker = workerOf(summary, nowMs);
  if (worker !== undefined) row.worker = worker;
  if (stored.kind === 'unreadable') {
    row.problem = `${stored.error.code}: ${stored.error.message}`;
    return row;
  }
  if (stored.kind === 'queued') {
    const task = taskOf(inputMessages(stored.queued));
    if (task !== undefined) row.task = task;
    const waitedUntilMs = summary.status === 'queued' ? nowMs : summary.updatedAtMs;
    row.queuedMs = Math.max(0, waitedUntilMs - stored.queued.submittedAtMs);
    return row;
  }
  const { state } = stored;
  const task = taskOf(state.messages, state.session?.turnStart);
  if (task !== undefined) row.task = task;
  // A run a worker took from the queue started after it was stored; any other run is stored as it starts.
  if (state.startedAtMs > summary.createdAtMs) row.queuedMs = state.startedAtMs - summary.createdAtMs;
  if (state.stopReason !== undefined) row.stopReason = state.stopReason;
  if (state.error?.code !== undefined) row.errorCode = state.error.code;
  const endMs = state.endedAtMs ?? (summary.status === 'running' ? nowMs : summary.updatedAtMs);
  row.durationMs = Math.max(0, endMs - state.startedAtMs);
  row.steps = state.report.steps;
  row.requests = state.report.requests.total;
  row.retries = state.report.retries.total;
  row.fallbacks = state.report.fallbacks.total;
  row.pendingDecisions = summary.status === 'interrupted' ? state.pendingDecisions.length : 0;
  return row;
}

/** The run page of a stored run; throws the reason a state cannot be read. */
export function runView(record: RunRecord, ledger: LedgerEntry[], nowMs: number): RunView | QueuedRunView {
  const stored = readStoredRun(record);
  if (stored.kind === 'unreadable') throw stored.error;
  if (stored.kind === 'queued') {
    const view: QueuedRunView = {
      run: runRow(record, stored, nowMs),
      queued: { submittedAtMs: stored.queued.submittedAtMs },
      timeline: queuedTimeline(record, stored.queued, nowMs),
      messages: inputMessages(stored.queued),
      ledger,
      pendingDecisions: [],
    };
    if (record.cancellation !== undefined) view.cancellation = record.cancellation;
    return view;
  }
  const { state } = stored;
  const view: RunView = {
    run: runRow(record, stored, nowMs),
    phase: state.phase,
    step: state.step,
    report: state.report,
    budgets: {
      deadlineAtMs: state.deadlineAtMs,
      steps: state.step,
      inputTokens: state.usage.inputTokens,
      outputTokens: state.usage.outputTokens,
      retries: state.report.retries.total,
      waitingMs: state.report.waitingMs,
    },
    timeline: buildTimeline(record, state, ledger, nowMs),
    messages: state.messages,
    ledger,
    pendingDecisions: record.status === 'interrupted' ? state.pendingDecisions : [],
    children: (state.children ?? []).map((child) => ({
      runId: child.runId,
      agentName: child.agentName,
      kind: child.kind,
      toolName: child.toolName,
      status: child.status,
    })),
  };
  if (state.parentRunId !== undefined) view.parentRunId = state.parentRunId;
  if (state.stopDetail !== undefined) view.stopDetail = state.stopDetail;
  if (state.output !== undefined) view.output = state.output;
  if (state.error !== undefined) view.error = state.error;
  if (record.cancellation !== undefined) view.cancellation = record.cancellation;
  return view;
}

const TASK_MAX_CHARACTERS = 200;

/** A queued run's input as messages. */
function inputMessages(queued: QueuedRunState): Message[] {
  return typeof queued.input === 'string' ? [{ role: 'user', content: queued.input }] : queued.input;
}

/** The last user message from `from` (a session run's own turn) until the model first answered, cut short. */
function taskOf(messages: readonly Message[], from = 0): string | undefined {
  let task: string | undefined;
  for (const message of messages.slice(from)) {
    if (message.role === 'assistant') break;
    if (message.role === 'user') task = message.content;
  }
  if (task === undefined) return undefined;
  return task.length > TASK_MAX_CHARACTERS ? `${task.slice(0, TASK_MAX_CHARACTERS - 1)}…` : task;
}
