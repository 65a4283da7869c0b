import { type JsonValue, KeelError, type LedgerEntry, type RunStatus, type RunSummary } from '@keel/core';

// How rows of the PostgreSQL schema (schema.ts) map to the RunStore's records (BIGINT columns arrive as strings),
// and pg failures to KeelErrors.

/** A row of `keel_runs` (without `state` in listings). */
export interface RunRow {
  run_id: string;
  agent_name: string;
  status: RunStatus;
  version: number;
  schema_version: number;
  state?: string;
  created_at_ms: string;
  updated_at_ms: string;
  cancel_reason: string | null;
  cancel_requested_at_ms: string | null;
}

/** A row of `keel_ledger`. */
export interface LedgerRow {
  run_id: string;
  idempotency_key: string;
  step: number;
  call_index: number;
  tool_name: string;
  status: 'started' | 'completed';
  result: string | null;
  started_at_ms: string;
  completed_at_ms: string | null;
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
    createdAtMs: Number(row.created_at_ms),
    updatedAtMs: Number(row.updated_at_ms),
  };
  if (row.cancel_reason !== null && row.cancel_requested_at_ms !== null) {
    summary.cancellation = { reason: row.cancel_reason, requestedAtMs: Number(row.cancel_requested_at_ms) };
  }
  return summary;
}

/** Classifies a pg or socket failure: lost races are conflicts, everything about reaching the server is unavailable. */
export function toStoreError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown }).code ?? '');
  const message = `PostgreSQL run store: ${(error as Error).message ?? String(error)}`;
  // 23505 unique_violation; 40001 serialization_failure; 40P01 deadlock.
  if (code === '23505')
    return new KeelError('store.conflict', message, { cause: error, data: { sqlState: code } });
  if (code === '40001' || code === '40P01') {
    return new KeelError('store.conflict', message, {
      cause: error,
      retryable: true,
      data: { sqlState: code },
    });
  }
  // Class 08 connection exceptions, 57P0x shutdown/cannot connect now, 53xxx resources, and socket-level errors.
  return new KeelError('store.unavailable', message, { cause: error, data: { sqlState: code } });
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
    startedAtMs: Number(row.started_at_ms),
  };
  if (row.result !== null) entry.result = JSON.parse(row.result) as JsonValue;
  if (row.completed_at_ms !== null) entry.completedAtMs = Number(row.completed_at_ms);
  return entry;
}
