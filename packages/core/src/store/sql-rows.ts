import type { JsonValue } from '../errors/keel-error.js';
import type { LedgerEntry, RunRecord, RunStatus, RunSummary } from '../spec/run-store.js';
import { putJournalBack } from './journal-log.js';
import { stateWithMessages } from './message-log.js';

// How rows of keel's SQL schema (the same columns in SQLite and PostgreSQL) map to the RunStore's records. Times are
// BIGINT columns: SQLite returns numbers, pg returns strings, so both are read through Number().

/** A time column as a driver returns it. */
type MillisecondsColumn = number | string;

/** A row of the runs table (without `state` in listings). */
export interface RunRow {
  run_id: string;
  agent_name: string;
  status: RunStatus;
  version: number;
  schema_version: number;
  state?: string;
  created_at_ms: MillisecondsColumn;
  updated_at_ms: MillisecondsColumn;
  cancel_reason: string | null;
  cancel_requested_at_ms: MillisecondsColumn | null;
  lease_owner: string | null;
  lease_expires_at_ms: MillisecondsColumn | null;
  /** Messages in the run's log; null when the state holds them inline (loads only). */
  message_count?: number | null;
  /** The log's message texts in order, joined with commas (loads only, with `message_count`). */
  messages?: string | null;
  /** Where the run's journal log ends; null when the state holds its journal inline (loads only). */
  journal_end?: number | string | null;
  /** The journal log's entry texts in order, joined with commas (loads only, with `journal_end`). */
  journal?: string | null;
}

/** A row of the ledger table. */
export interface LedgerRow {
  run_id: string;
  idempotency_key: string;
  step: number;
  call_index: number;
  tool_name: string;
  status: 'started' | 'completed';
  result: string | null;
  started_at_ms: MillisecondsColumn;
  completed_at_ms: MillisecondsColumn | null;
}

/** The columns of a run summary, in listings. */
export const RUN_SUMMARY_COLUMNS =
  'run_id, agent_name, status, version, schema_version, created_at_ms, updated_at_ms, cancel_reason, cancel_requested_at_ms, lease_owner, lease_expires_at_ms';

/** A run row as a summary. */
export function runSummaryFromRow(row: RunRow): RunSummary {
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
  if (row.lease_owner !== null && row.lease_expires_at_ms !== null) {
    summary.lease = { owner: row.lease_owner, expiresAtMs: Number(row.lease_expires_at_ms) };
  }
  return summary;
}

/**
 * A run row, `state` included, as a record. With `message_count`, the state's messages are in the log: `messages`
 * (their texts joined with commas) takes the place of their count in the state; likewise with `journal_end`, the
 * journal's entries (`journal`).
 */
export function runRecordFromRow(row: RunRow): RunRecord {
  const stateText = row.state ?? 'null';
  const logged = row.message_count !== undefined && row.message_count !== null;
  const record: RunRecord = {
    ...runSummaryFromRow(row),
    state: logged ? stateWithMessages(stateText, row.messages ?? '') : (JSON.parse(stateText) as JsonValue),
  };
  if (logged) record.messageCount = Number(row.message_count);
  if (row.journal_end !== undefined && row.journal_end !== null) {
    record.state = putJournalBack(record.state, row.journal ?? '');
    record.journalEnd = Number(row.journal_end);
  }
  return record;
}

/** A ledger row as an entry. */
export function ledgerEntryFromRow(row: LedgerRow): LedgerEntry {
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
