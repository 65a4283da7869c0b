import {
  type CancellationRequest,
  type JsonValue,
  KeelError,
  type LedgerEntry,
  type Message,
  migrateRunState,
  type PendingDecision,
  type RunRecord,
  type RunReport,
  type RunState,
  type RunStatus,
  type RunSummary,
  type SerializedError,
  type StopReason,
} from '@keel/core';
import { buildTimeline, type Timeline } from './timeline.js';

/** A run as the list shows it: the stored summary and the figures of its report. */
export interface RunRow {
  runId: string;
  agentName: string;
  status: RunStatus;
  version: number;
  createdAtMs: number;
  updatedAtMs: number;
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

/** Everything the run page shows. */
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
}

/** Reads a stored state, or says why it cannot be read. */
export function readState(record: RunRecord): RunState | KeelError {
  try {
    return migrateRunState(record.state, record.runId);
  } catch (error) {
    return KeelError.isInstance(error) ? error : new KeelError('store.invalid', String(error));
  }
}

/** The list row of a run. */
export function runRow(summary: RunSummary, state: RunState | KeelError, nowMs: number): RunRow {
  const row: RunRow = {
    runId: summary.runId,
    agentName: summary.agentName,
    status: summary.status,
    version: summary.version,
    createdAtMs: summary.createdAtMs,
    updatedAtMs: summary.updatedAtMs,
  };
  if (KeelError.isInstance(state)) {
    row.problem = `${state.code}: ${state.message}`;
    return row;
  }
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

/** The run page of a stored run. */
export function runView(record: RunRecord, ledger: LedgerEntry[], nowMs: number): RunView {
  const state = readState(record);
  if (KeelError.isInstance(state)) throw state;
  const view: RunView = {
    run: runRow(record, state, nowMs),
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
  };
  if (state.stopDetail !== undefined) view.stopDetail = state.stopDetail;
  if (state.output !== undefined) view.output = state.output;
  if (state.error !== undefined) view.error = state.error;
  if (record.cancellation !== undefined) view.cancellation = record.cancellation;
  return view;
}
