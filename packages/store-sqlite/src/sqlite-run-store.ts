import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type JsonValue,
  KeelError,
  type LedgerEntry,
  type RunRecord,
  type RunStatus,
  type RunStore,
  type RunSummary,
  type SessionRecord,
} from '@keel/core';
import {
  type CheckpointWrite,
  checkNewRunLog,
  createdRecord,
  type Lease,
  type LedgerRow,
  leaseConflict,
  ledgerEntryFromRow,
  messageCountAfter,
  messageTextsOf,
  type NewRun,
  RUN_SUMMARY_COLUMNS,
  type RunRow,
  runNotFound,
  runRecordFromRow,
  runSummaryFromRow,
  type SessionAppend,
  type SessionSummary,
  type StartedToolCall,
  type StepCommit,
  toolCallNotStarted,
} from '@keel/core/store';
import Database from 'better-sqlite3';
import { switchToWal } from './journal-mode.js';
import { openReadOnly } from './read-only.js';
import { migrate } from './schema.js';
import { checkOptions, type SqliteRunStoreOptions } from './sqlite-options.js';
import { toStoreError } from './sqlite-rows.js';
import { SqliteSessions } from './sqlite-sessions.js';
import { type LeaseRow, SqliteStepCommit } from './sqlite-step-commit.js';

/**
 * A RunStore in a SQLite file (WAL mode), shared safely by several processes on one machine. The default store of
 * the CLI, at `./.keel/keel.db`. Each run's conversation is a log (`RunStore.messageLog`), a row per write: the run's
 * input is one row, and a checkpoint writes the small state and the messages added since the last one (one row), in
 * one transaction.
 *
 * @example
 *   const store = new SqliteRunStore('.keel/keel.db');
 */
export class SqliteRunStore implements RunStore {
  readonly messageLog = true;
  readonly journalLog = true;
  readonly createsInCommit = true;
  readonly ranCallsInCommit = true;
  private readonly database: Database.Database;
  private readonly statements;
  private readonly steps: SqliteStepCommit;
  private readonly where: { path: string; readOnly: boolean };
  private readonly sessions: SqliteSessions;

  /**
   * Opens (creating it and its directory if needed) the database at `path`, or an in-memory one for `":memory:"`;
   * with `readOnly`, opens an existing one and creates nothing. Throws `config.invalid` for a bad path or options,
   * `store.invalid` for a file that is damaged, not a SQLite database or not a keel store, `store.unavailable` when
   * the file cannot be opened.
   */
  constructor(path: string, options: SqliteRunStoreOptions = {}) {
    if (typeof path !== 'string' || path === '') {
      throw new KeelError('config.invalid', 'SqliteRunStore needs a file path (or ":memory:")');
    }
    const { synchronous, busyTimeoutMs, readOnly, walAutocheckpoint } = checkOptions(options);
    this.where = { path, readOnly };
    try {
      if (readOnly) {
        this.database = openReadOnly(path, busyTimeoutMs);
      } else {
        if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
        this.database = new Database(path, { timeout: busyTimeoutMs });
        switchToWal(this.database, busyTimeoutMs);
        this.database.pragma(`synchronous = ${synchronous.toUpperCase()}`);
        this.database.pragma(`wal_autocheckpoint = ${walAutocheckpoint}`);
        migrate(this.database);
      }
    } catch (error) {
      throw toStoreError(error, `Cannot open SQLite run store at ${path}`, this.where);
    }
    const database = this.database;
    this.statements = {
      insertRun: database.prepare(
        `INSERT INTO runs (run_id, agent_name, status, version, schema_version, state, created_at_ms, updated_at_ms,
           lease_owner, lease_expires_at_ms, message_count)
         VALUES (@runId, @agentName, @status, 1, @schemaVersion, @state, @createdAtMs, @createdAtMs, @leaseOwner,
           @leaseExpiresAtMs, @messageCount)`,
      ),
      insertMessage: database.prepare('INSERT INTO run_messages (run_id, idx, message) VALUES (?, ?, ?)'),
      loadRun: database.prepare(
        `SELECT ${RUN_SUMMARY_COLUMNS}, state, message_count, journal_end FROM runs WHERE run_id = ?`,
      ),
      loadJournal: database
        .prepare('SELECT entry FROM run_journal WHERE run_id = ? AND idx < ? ORDER BY idx')
        .pluck(),
      loadMessages: database
        .prepare('SELECT message FROM run_messages WHERE run_id = ? AND idx < ? ORDER BY idx')
        .pluck(),
      loadLease: database.prepare(
        'SELECT lease_owner, lease_expires_at_ms, version FROM runs WHERE run_id = ?',
      ),
      acquireLease: database.prepare(
        `UPDATE runs SET lease_owner = @owner, lease_expires_at_ms = @expiresAtMs
         WHERE run_id = @runId AND (lease_owner IS NULL OR lease_owner = @owner OR lease_expires_at_ms <= @nowMs)`,
      ),
      releaseLease: database.prepare(
        'UPDATE runs SET lease_owner = NULL, lease_expires_at_ms = NULL WHERE run_id = ? AND lease_owner = ?',
      ),
      listAll: database.prepare(
        `SELECT ${RUN_SUMMARY_COLUMNS} FROM runs ORDER BY created_at_ms DESC, run_id DESC LIMIT ?`,
      ),
      listByStatus: database.prepare(
        `SELECT ${RUN_SUMMARY_COLUMNS} FROM runs WHERE status = ? ORDER BY created_at_ms DESC, run_id DESC LIMIT ?`,
      ),
      startTool: database.prepare(
        `INSERT INTO ledger (run_id, idempotency_key, step, call_index, tool_name, status, started_at_ms)
         VALUES (@runId, @idempotencyKey, @step, @callIndex, @toolName, 'started', @startedAtMs)
         ON CONFLICT (run_id, idempotency_key) DO NOTHING`,
      ),
      completeTool: database.prepare(
        `UPDATE ledger SET status = 'completed', result = @result, completed_at_ms = @completedAtMs
         WHERE run_id = @runId AND idempotency_key = @idempotencyKey AND status = 'started'`,
      ),
      requestCancellation: database.prepare(
        `UPDATE runs SET cancel_reason = @reason, cancel_requested_at_ms = @nowMs, version = version + 1,
           updated_at_ms = @nowMs,
           status = CASE WHEN status = 'running' AND lease_owner IS NOT NULL AND lease_expires_at_ms > @nowMs
                         THEN status ELSE 'cancelled' END
         WHERE run_id = @runId AND status NOT IN ('completed', 'failed', 'cancelled')
         RETURNING status`,
      ),
      runStatus: database.prepare('SELECT status FROM runs WHERE run_id = ?'),
      ledgerEntry: database.prepare('SELECT status FROM ledger WHERE run_id = ? AND idempotency_key = ?'),
      ledger: database.prepare('SELECT * FROM ledger WHERE run_id = ? ORDER BY step, call_index'),
    };
    this.steps = new SqliteStepCommit(database);
    this.sessions = new SqliteSessions(database);
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    checkNewRunLog(run);
    const log = run.messages;
    const insertRun = () =>
      this.statements.insertRun.run({
        runId: run.runId,
        agentName: run.agentName,
        status: run.status,
        schemaVersion: run.schemaVersion,
        state: JSON.stringify(run.state),
        createdAtMs: run.createdAtMs,
        leaseOwner: run.lease?.owner ?? null,
        leaseExpiresAtMs: run.lease?.expiresAtMs ?? null,
        messageCount: log === undefined ? null : messageCountAfter(log),
      });
    const insert = () => {
      insertRun();
      if (log === undefined) return;
      // The input as one row, one statement, whatever its length (see SqliteStepCommit: a row holds the messages up
      // to the next row's index).
      const texts = messageTextsOf(log);
      if (texts.length > 0) this.statements.insertMessage.run(run.runId, 0, texts.join(','));
    };
    const { session } = run;
    this.guard(() => {
      if (session === undefined && log === undefined) insert();
      else
        this.database
          .transaction(() => {
            if (session !== undefined) this.sessions.claim({ ...run, session });
            insert();
          })
          .immediate();
    });
    return createdRecord(run);
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    const row = this.guard(() => this.loadRow(runId));
    return row === undefined ? undefined : runRecordFromRow(row);
  }

  /** The run's row with its log's messages joined, read in one transaction (one snapshot of the file). */
  private readonly loadRow = (runId: string): RunRow | undefined =>
    this.database.transaction(() => {
      const row = this.statements.loadRun.get(runId) as RunRow | undefined;
      if (row === undefined) return row;
      const loaded = { ...row };
      if (row.message_count !== null && row.message_count !== undefined) {
        const texts = this.statements.loadMessages.all(runId, row.message_count) as string[];
        loaded.messages = texts.join(',');
      }
      if (row.journal_end !== null && row.journal_end !== undefined) {
        const texts = this.statements.loadJournal.all(runId, row.journal_end) as string[];
        loaded.journal = texts.join(',');
      }
      return loaded;
    })();

  async saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    return this.guard(() => this.steps.run(runId, { checkpoint }));
  }

  async commitStep(runId: string, commit: StepCommit): Promise<number> {
    return this.guard(() => this.steps.run(runId, commit));
  }

  async listRuns(filter: { status?: RunStatus; limit?: number } = {}): Promise<RunSummary[]> {
    const limit = filter.limit ?? 100;
    const rows = this.guard(
      () =>
        (filter.status === undefined
          ? this.statements.listAll.all(limit)
          : this.statements.listByStatus.all(filter.status, limit)) as RunRow[],
    );
    return rows.map(runSummaryFromRow);
  }

  async acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease> {
    const expiresAtMs = nowMs + ttlMs;
    const changes = this.guard(
      () => this.statements.acquireLease.run({ runId, owner, expiresAtMs, nowMs }).changes,
    );
    if (changes === 1) return { runId, owner, expiresAtMs };
    const current = this.guard(() => this.statements.loadLease.get(runId) as LeaseRow | undefined);
    throw leaseConflict(
      runId,
      current === undefined
        ? undefined
        : { holder: current.lease_owner, expiresAtMs: current.lease_expires_at_ms ?? nowMs },
      nowMs,
    );
  }

  async releaseLease(runId: string, owner: string): Promise<void> {
    this.guard(() => this.statements.releaseLease.run(runId, owner));
  }

  async recordToolStarted(entry: StartedToolCall): Promise<void> {
    this.guard(() => this.statements.startTool.run(entry));
  }

  async recordToolCompleted(runId: string, idempotencyKey: string, result: JsonValue, completedAtMs: number) {
    const changes = this.guard(
      () =>
        this.statements.completeTool.run({
          runId,
          idempotencyKey,
          result: JSON.stringify(result),
          completedAtMs,
        }).changes,
    );
    if (
      changes === 0 &&
      this.guard(() => this.statements.ledgerEntry.get(runId, idempotencyKey)) === undefined
    ) {
      throw toolCallNotStarted(runId, idempotencyKey);
    }
  }

  async ledger(runId: string): Promise<LedgerEntry[]> {
    const rows = this.guard(() => this.statements.ledger.all(runId) as LedgerRow[]);
    return rows.map(ledgerEntryFromRow);
  }

  async requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus> {
    const updated = this.guard(
      () =>
        this.statements.requestCancellation.get({ runId, reason, nowMs }) as
          | { status: RunStatus }
          | undefined,
    );
    if (updated !== undefined) return updated.status;
    const current = this.guard(
      () => this.statements.runStatus.get(runId) as { status: RunStatus } | undefined,
    );
    if (current === undefined) throw runNotFound(runId);
    return current.status;
  }

  async loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.guard(() => this.sessions.load(sessionId));
  }

  async appendSessionTurn(sessionId: string, append: SessionAppend): Promise<number> {
    return this.guard(() =>
      this.database.transaction(() => this.sessions.append(sessionId, append)).immediate(),
    );
  }

  async releaseSession(sessionId: string, runId: string, nowMs: number): Promise<void> {
    this.guard(() => this.sessions.release(sessionId, runId, nowMs));
  }

  async listSessions(filter: { limit?: number } = {}): Promise<SessionSummary[]> {
    return this.guard(() => this.sessions.list(filter.limit ?? 100));
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.guard(() => this.database.transaction(() => this.sessions.delete(sessionId)).immediate());
  }

  async close(): Promise<void> {
    if (this.database.open) this.database.close();
  }

  private guard<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      throw toStoreError(error, 'SQLite run store operation failed', this.where);
    }
  }
}
