import {
  type JsonValue,
  KeelError,
  type LedgerEntry,
  type RunRecord,
  type RunStatus,
  type RunSummary,
} from '@keel/core';

// How rows of the SQLite schema (schema.ts) map to the RunStore's records, and SQLite failures to KeelErrors.

/** A row of `runs` (without `state` in listings). */
export interface RunRow {
  run_id: string;
  agent_name: string;
  status: RunStatus;
  version: number;
  schema_version: number;
  state?: string;
  created_at_ms: number;
  updated_at_ms: number;
  cancel_reason: string | null;
  cancel_requested_at_ms: number | null;
}

/** A row of `ledger`. */
export interface LedgerRow {
  run_id: string;
  idempotency_key: string;
  step: number;
  call_index: number;
  tool_name: string;
  status: 'started' | 'completed';
  result: string | null;
  started_at_ms: number;
  completed_at_ms: number | null;
}

/** The columns of a run summary, in listings. */
export const SUMMARY_COLUMNS =
  'run_id, agent_name, status, version, schema_version, created_at_ms, updated_at_ms, cancel_reason, cancel_requested_at_ms';

/** A run row as a summary. */
export function toSummary(row: RunRow): RunSummary {
  const summary: RunSummary = {
    runId: row.run_id,
    agentName: row.agent_name,
    status: row.status,
    version: row.version,
    schemaVersion: row.schema_version,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
  };
  if (row.cancel_reason !== null && row.cancel_requested_at_ms !== null) {
    summary.cancellation = { reason: row.cancel_reason, requestedAtMs: row.cancel_requested_at_ms };
  }
  return summary;
}

/** A run row, `state` included, as a record. */
export function toRecord(row: RunRow): RunRecord {
  return { ...toSummary(row), state: JSON.parse(row.state ?? 'null') as JsonValue };
}

/**
 * A SQLite failure as a KeelError: a constraint violation is a conflict (a duplicate run id); anything else (a busy or
 * locked database, an I/O error, a full disk, a closed connection) counts as the store being unavailable.
 */
export function toStoreError(error: unknown, context: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  const message = `${context}: ${(error as Error)?.message ?? String(error)}`;
  const data: Record<string, string> = code === '' ? {} : { sqliteCode: code };
  const kind = code.startsWith('SQLITE_CONSTRAINT') ? 'store.conflict' : 'store.unavailable';
  return new KeelError(kind, message, { cause: error, data });
}

/** A ledger row as an entry. */
export function toLedgerEntry(row: LedgerRow): LedgerEntry {
  const entry: LedgerEntry = {
    runId: row.run_id,
    idempotencyKey: row.idempotency_key,
    step: row.step,
    callIndex: row.call_index,
    toolName: row.tool_name,
    status: row.status,
    startedAtMs: row.started_at_ms,
  };
  if (row.result !== null) entry.result = JSON.parse(row.result) as JsonValue;
  if (row.completed_at_ms !== null) entry.completedAtMs = row.completed_at_ms;
  return entry;
}
