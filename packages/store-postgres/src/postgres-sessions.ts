import type { RunStatus, SessionRecord } from '@keel/core';
import {
  type NewRun,
  SESSION_COLUMNS,
  type SessionAppend,
  type SessionClaim,
  type SessionHead,
  type SessionRow,
  type SessionSummary,
  type SessionTurnRow,
  sessionAppendConflict,
  sessionClaimConflict,
  sessionSummaryFromRow,
  sessionTurnFromRow,
} from '@keel/core/store';
import type pg from 'pg';

/** Runs a statement: on a transaction's client, or on the pool. */
type Query = <Row extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;

// The session half of the PostgreSQL run store: statements over `keel_sessions` and `keel_session_turns`. A claim and
// an append lock the session's row (SELECT ... FOR UPDATE) inside the caller's transaction, so that two of them on one
// session are taken one after the other, the second reading what the first committed.

/** Claims the session for a new run (see `SessionClaim`) inside a transaction; throws `store.conflict` when it may not. */
export async function claimSession(query: Query, run: NewRun, claim: SessionClaim): Promise<void> {
  const { sessionId } = claim;
  let head = await lockedHead(query, sessionId);
  if (head === undefined && claim.expectedVersion === 0) {
    const inserted = await query(
      `INSERT INTO keel_sessions (session_id, agent_name, version, message_count, active_run_id, created_at_ms, updated_at_ms)
       VALUES ($1, $2, 0, 0, $3, $4, $4) ON CONFLICT (session_id) DO NOTHING`,
      [sessionId, run.agentName, run.runId, run.createdAtMs],
    );
    if (inserted.rowCount === 1) return;
    // Another run created the session at the same moment: its row is committed now; decide on it.
    head = await lockedHead(query, sessionId);
  }
  let holder: { status: RunStatus; leaseExpiresAtMs: string | null } | undefined;
  if (head?.activeRunId != null && head.activeRunId !== run.runId) {
    const result = await query<{ status: RunStatus; lease_expires_at_ms: string | null }>(
      'SELECT status, lease_expires_at_ms FROM keel_runs WHERE run_id = $1',
      [head.activeRunId],
    );
    const row = result.rows[0];
    holder = row && { status: row.status, leaseExpiresAtMs: row.lease_expires_at_ms };
  }
  const refused = sessionClaimConflict(
    run.runId,
    claim,
    head,
    holder && {
      status: holder.status,
      leaseExpiresAtMs: holder.leaseExpiresAtMs === null ? null : Number(holder.leaseExpiresAtMs),
    },
  );
  if (refused !== undefined) throw refused;
  await query('UPDATE keel_sessions SET active_run_id = $2, updated_at_ms = $3 WHERE session_id = $1', [
    sessionId,
    run.runId,
    run.createdAtMs,
  ]);
}

/** Appends a run's turns (see `RunStore.appendSessionTurn`) inside a transaction. */
export async function appendTurn(query: Query, sessionId: string, append: SessionAppend): Promise<number> {
  const head = await lockedHead(query, sessionId);
  if (head !== undefined) {
    const existing = await query('SELECT 1 FROM keel_session_turns WHERE session_id = $1 AND run_id = $2', [
      sessionId,
      append.runId,
    ]);
    if (existing.rowCount === 1) {
      if (head.activeRunId === append.runId)
        await releaseSession(query, sessionId, append.runId, append.nowMs);
      return head.version;
    }
  }
  const refused = sessionAppendConflict(sessionId, append, head);
  if (refused !== undefined) throw refused;
  const turn = append.expectedVersion + 1;
  await query(
    `INSERT INTO keel_session_turns (session_id, turn, run_id, messages, appended_at_ms) VALUES ($1, $2, $3, $4, $5)`,
    [sessionId, turn, append.runId, JSON.stringify(append.messages), append.nowMs],
  );
  await query(
    `UPDATE keel_sessions SET version = $2, message_count = message_count + $3, active_run_id = NULL, updated_at_ms = $4
     WHERE session_id = $1`,
    [sessionId, turn, append.messages.length, append.nowMs],
  );
  return turn;
}

/** Lets go of the session if `runId` holds it. */
export async function releaseSession(
  query: Query,
  sessionId: string,
  runId: string,
  nowMs: number,
): Promise<void> {
  await query(
    'UPDATE keel_sessions SET active_run_id = NULL, updated_at_ms = $3 WHERE session_id = $1 AND active_run_id = $2',
    [sessionId, runId, nowMs],
  );
}

/** The session and its turns, oldest first. */
export async function loadSession(query: Query, sessionId: string): Promise<SessionRecord | undefined> {
  const summary = await query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM keel_sessions WHERE session_id = $1`,
    [sessionId],
  );
  const row = summary.rows[0];
  if (row === undefined) return undefined;
  const turns = await query<SessionTurnRow>(
    'SELECT run_id, messages, appended_at_ms FROM keel_session_turns WHERE session_id = $1 ORDER BY turn',
    [sessionId],
  );
  return { ...sessionSummaryFromRow(row), turns: turns.rows.map(sessionTurnFromRow) };
}

/** Sessions, most recently updated first. */
export async function listSessions(query: Query, limit: number): Promise<SessionSummary[]> {
  const result = await query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM keel_sessions ORDER BY updated_at_ms DESC, session_id DESC LIMIT $1`,
    [limit],
  );
  return result.rows.map(sessionSummaryFromRow);
}

/** Deletes the session and its turns inside a transaction; whether it existed. */
export async function deleteSession(query: Query, sessionId: string): Promise<boolean> {
  await query('DELETE FROM keel_session_turns WHERE session_id = $1', [sessionId]);
  const deleted = await query('DELETE FROM keel_sessions WHERE session_id = $1', [sessionId]);
  return deleted.rowCount === 1;
}

async function lockedHead(query: Query, sessionId: string): Promise<SessionHead | undefined> {
  const result = await query<{ version: number; active_run_id: string | null }>(
    'SELECT version, active_run_id FROM keel_sessions WHERE session_id = $1 FOR UPDATE',
    [sessionId],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : { version: row.version, activeRunId: row.active_run_id };
}
