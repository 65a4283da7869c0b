import type { SessionRecord } from '@keel/core';
import {
  type NewRun,
  SESSION_COLUMNS,
  type SessionAppend,
  type SessionHead,
  type SessionRow,
  type SessionSummary,
  type SessionTurnRow,
  sessionAppendConflict,
  sessionClaimConflict,
  sessionSummaryFromRow,
  sessionTurnFromRow,
} from '@keel/core/store';
import type Database from 'better-sqlite3';

/**
 * The session half of the SQLite run store: statements over the `sessions` and `session_turns` tables. Every method is
 * synchronous and meant to run inside the store's guard; `claim` and `append` run inside a write transaction.
 */
export class SqliteSessions {
  private prepared: ReturnType<typeof prepare> | undefined;

  constructor(private readonly database: Database.Database) {}

  /**
   * The statements, prepared on first use: a store opened read-only on a database of an older schema (never migrated:
   * no session tables) then reads as holding no sessions.
   */
  private get statements(): ReturnType<typeof prepare> {
    this.prepared ??= prepare(this.database);
    return this.prepared;
  }

  /** Whether the database has the session tables (always once migrated; not in a read-only store of an older schema). */
  private get present(): boolean {
    if (this.prepared !== undefined) return true;
    return (
      this.database
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'")
        .get() !== undefined
    );
  }

  /** Claims the session for a new run (see `SessionClaim`); throws `store.conflict` when it may not. */
  claim(run: NewRun & { session: NonNullable<NewRun['session']> }): void {
    const { sessionId } = run.session;
    const head = this.head(sessionId);
    const holderRow =
      head?.activeRunId == null || head.activeRunId === run.runId
        ? undefined
        : (this.statements.holder.get(head.activeRunId) as HolderRow | undefined);
    const refused = sessionClaimConflict(
      run.runId,
      run.session,
      head,
      holderRow && { status: holderRow.status, leaseExpiresAtMs: holderRow.lease_expires_at_ms },
    );
    if (refused !== undefined) throw refused;
    const values = { sessionId, agentName: run.agentName, runId: run.runId, nowMs: run.createdAtMs };
    if (head === undefined) this.statements.insert.run(values);
    else this.statements.hold.run(values);
  }

  load(sessionId: string): SessionRecord | undefined {
    if (!this.present) return undefined;
    const row = this.statements.summary.get(sessionId) as SessionRow | undefined;
    if (row === undefined) return undefined;
    const turns = (this.statements.turns.all(sessionId) as SessionTurnRow[]).map(sessionTurnFromRow);
    return { ...sessionSummaryFromRow(row), turns };
  }

  /** Appends a run's turns (see `RunStore.appendSessionTurn`); call inside a write transaction. */
  append(sessionId: string, append: SessionAppend): number {
    const head = this.head(sessionId);
    if (head !== undefined && this.statements.appended.get(sessionId, append.runId) !== undefined) {
      if (head.activeRunId === append.runId) this.release(sessionId, append.runId, append.nowMs);
      return head.version;
    }
    const refused = sessionAppendConflict(sessionId, append, head);
    if (refused !== undefined) throw refused;
    const turn = append.expectedVersion + 1;
    const values = { sessionId, turn, runId: append.runId, nowMs: append.nowMs };
    this.statements.insertTurn.run({ ...values, messages: JSON.stringify(append.messages) });
    this.statements.advance.run({ ...values, count: append.messages.length });
    return turn;
  }

  release(sessionId: string, runId: string, nowMs: number): void {
    this.statements.release.run({ sessionId, runId, nowMs });
  }

  list(limit: number): SessionSummary[] {
    if (!this.present) return [];
    return (this.statements.list.all(limit) as SessionRow[]).map(sessionSummaryFromRow);
  }

  /** Deletes the session and its turns; call inside a write transaction. */
  delete(sessionId: string): boolean {
    this.statements.deleteTurns.run(sessionId);
    return this.statements.deleteSession.run(sessionId).changes === 1;
  }

  private head(sessionId: string): SessionHead | undefined {
    const row = this.statements.head.get(sessionId) as
      | { version: number; active_run_id: string | null }
      | undefined;
    return row === undefined ? undefined : { version: row.version, activeRunId: row.active_run_id };
  }
}

/** The columns of the run holding a session. */
interface HolderRow {
  status: NewRun['status'];
  lease_expires_at_ms: number | null;
}

/** The statements over the session tables. */
function prepare(database: Database.Database) {
  return {
    head: database.prepare('SELECT version, active_run_id FROM sessions WHERE session_id = ?'),
    holder: database.prepare('SELECT status, lease_expires_at_ms FROM runs WHERE run_id = ?'),
    insert: database.prepare(
      `INSERT INTO sessions (session_id, agent_name, version, message_count, active_run_id, created_at_ms, updated_at_ms)
       VALUES (@sessionId, @agentName, 0, 0, @runId, @nowMs, @nowMs)`,
    ),
    hold: database.prepare(
      'UPDATE sessions SET active_run_id = @runId, updated_at_ms = @nowMs WHERE session_id = @sessionId',
    ),
    summary: database.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`),
    turns: database.prepare(
      'SELECT run_id, messages, appended_at_ms FROM session_turns WHERE session_id = ? ORDER BY turn',
    ),
    appended: database.prepare('SELECT 1 FROM session_turns WHERE session_id = ? AND run_id = ?'),
    insertTurn: database.prepare(
      `INSERT INTO session_turns (session_id, turn, run_id, messages, appended_at_ms)
       VALUES (@sessionId, @turn, @runId, @messages, @nowMs)`,
    ),
    advance: database.prepare(
      `UPDATE sessions SET version = @turn, message_count = message_count + @count, active_run_id = NULL,
         updated_at_ms = @nowMs
       WHERE session_id = @sessionId`,
    ),
    release: database.prepare(
      `UPDATE sessions SET active_run_id = NULL, updated_at_ms = @nowMs
       WHERE session_id = @sessionId AND active_run_id = @runId`,
    ),
    list: database.prepare(
      `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY updated_at_ms DESC, session_id DESC LIMIT ?`,
    ),
    deleteTurns: database.prepare('DELETE FROM session_turns WHERE session_id = ?'),
    deleteSession: database.prepare('DELETE FROM sessions WHERE session_id = ?'),
  };
}
