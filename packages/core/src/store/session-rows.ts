import type { JsonValue } from '../errors/keel-error.js';
import type { SessionSummary, SessionTurn } from '../spec/run-store.js';

// How rows of keel's session tables (the same columns in SQLite and PostgreSQL) map to the RunStore's records. Times
// are BIGINT columns: SQLite returns numbers, pg returns strings, so both are read through Number().

/** A row of the sessions table. */
export interface SessionRow {
  session_id: string;
  agent_name: string;
  version: number;
  message_count: number;
  active_run_id: string | null;
  created_at_ms: number | string;
  updated_at_ms: number | string;
}

/** A row of the session turns table (the columns a load reads). */
export interface SessionTurnRow {
  run_id: string;
  messages: string;
  appended_at_ms: number | string;
}

/** The columns of a session summary. */
export const SESSION_COLUMNS =
  'session_id, agent_name, version, message_count, active_run_id, created_at_ms, updated_at_ms';

/** A session row as a summary. */
export function sessionSummaryFromRow(row: SessionRow): SessionSummary {
  const summary: SessionSummary = {
    sessionId: row.session_id,
    agentName: row.agent_name,
    version: Number(row.version),
    messageCount: Number(row.message_count),
    createdAtMs: Number(row.created_at_ms),
    updatedAtMs: Number(row.updated_at_ms),
  };
  if (row.active_run_id !== null) summary.activeRunId = row.active_run_id;
  return summary;
}

/** A turn row as a turn. */
export function sessionTurnFromRow(row: SessionTurnRow): SessionTurn {
  return {
    runId: row.run_id,
    messages: JSON.parse(row.messages) as JsonValue[],
    appendedAtMs: Number(row.appended_at_ms),
  };
}
