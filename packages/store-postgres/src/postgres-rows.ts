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

/**
 * Classifies a pg or socket failure by its SQL state. Lost races are conflicts (23505 unique_violation; 40001
 * serialization_failure and 40P01 deadlock, worth another attempt). The server refusing the statement itself is
 * `store.invalid`, not worth retrying: class 42 (syntax error, undefined table or column: a schema that is not
 * keel's), 22 (a value the column cannot hold) and the rest of 23 (other integrity violations). Everything else is
 * about reaching the server (class 08 connection exceptions, 57P0x shutdown, 53 resources, socket errors, timeouts):
 * `store.unavailable`.
 */
export function toStoreError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  const message = `PostgreSQL run store: ${(error as Error)?.message ?? String(error)}`;
  const data = { sqlState: code };
  if (code === '23505') return new KeelError('store.conflict', message, { cause: error, data });
  if (code === '40001' || code === '40P01') {
    return new KeelError('store.conflict', message, { cause: error, retryable: true, data });
  }
  if (/^(42|22|23)[0-9A-Z]{3}$/.test(code)) {
    return new KeelError('store.invalid', message, {
      cause: error,
      data,
      guidance:
        "The database refused the statement: check that it holds keel's own schema and nothing else changed it.",
    });
  }
  return new KeelError('store.unavailable', message, { cause: error, data });
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
