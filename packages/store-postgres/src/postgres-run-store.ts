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
import pg from 'pg';
import { checkOptions, type PostgresRunStoreOptions } from './postgres-options.js';
import { toStoreError } from './postgres-rows.js';
import {
  appendTurn,
  claimSession,
  deleteSession,
  listSessions,
  loadSession,
  releaseSession,
} from './postgres-sessions.js';
import {
  COMMIT_STEP_SQL,
  CREATE_STEP_SQL,
  commitStepValues,
  REFUSED_COMMIT_SQL,
  type RefusedCommitRow,
  refusedCommitError,
} from './postgres-step-commit.js';
import { migrate } from './schema.js';

/** The prepared statement of a step's commit: the statement a durable run sends once or twice a step. */
const COMMIT_STEP_STATEMENT = 'keel_commit_step';
const CREATE_STEP_STATEMENT = 'keel_create_step';

/** Runs a statement: on a transaction's client, or on the pool. */
type Query = <Row extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>;

/**
 * A RunStore in PostgreSQL, for fleets of workers sharing runs. Leases and checkpoints are single conditional
 * statements, so two workers can never both advance one run. Connection failures become `store.unavailable`.
 *
 * @example
 *   const store = new PostgresRunStore({ connectionString: 'postgres://keel@127.0.0.1:5432/keel' });
 */
export class PostgresRunStore implements RunStore {
  readonly messageLog = true;
  readonly journalLog = true;
  readonly createsInCommit = true;
  readonly ranCallsInCommit = true;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private ready: Promise<void> | undefined;

  /**
   * Makes the store; it connects (and creates its tables) on first use. Throws `config.invalid` for bad options,
   * naming the option at fault.
   */
  constructor(options: PostgresRunStoreOptions) {
    checkOptions(options);
    this.ownsPool = options.pool === undefined;
    this.pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
        statement_timeout: options.statementTimeoutMs ?? 10_000,
        query_timeout: (options.statementTimeoutMs ?? 10_000) + 1_000,
      });
    // An idle connection dropped by the server (a restart, a failover) must not crash the process.
    this.pool.on('error', () => undefined);
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    checkNewRunLog(run);
    const { session, messages: log } = run;
    // One statement: the run's row and, for a run whose messages go to the log, their rows. The messages travel as
    // one JSON array ($10), their texts joined: a run's input may be a long conversation, and a text array would
    // have node-postgres escape every message; `json_array_elements` gives back each message's text as it was sent.
    const insert = (query: Query) =>
      query(
        `WITH run AS (
           INSERT INTO keel_runs (run_id, agent_name, status, version, schema_version, state, created_at_ms,
             updated_at_ms, lease_owner, lease_expires_at_ms, message_count)
           VALUES ($1, $2, $3, 1, $4, $5, $6, $6, $7, $8,
             CASE WHEN $9::boolean THEN json_array_length($10::json) ELSE NULL END)
           RETURNING run_id
         )
         INSERT INTO keel_run_messages (run_id, idx, message)
         SELECT run.run_id, m.ordinality - 1, m.message::text
         FROM run, json_array_elements($10::json) WITH ORDINALITY AS m(message, ordinality)`,
        [
          run.runId,
          run.agentName,
          run.status,
          run.schemaVersion,
          JSON.stringify(run.state),
          run.createdAtMs,
          run.lease?.owner ?? null,
          run.lease?.expiresAtMs ?? null,
          log !== undefined,
          log === undefined ? '[]' : `[${messageTextsOf(log).join(',')}]`,
        ],
      );
    if (session === undefined) await insert(this.query.bind(this));
    else
      await this.transaction(async (query) => {
        await claimSession(query, run, session);
        await insert(query);
      });
    return createdRecord(run);
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    // One statement: the row and its log's messages from one snapshot.
    const result = await this.query<RunRow>(
      `SELECT ${RUN_SUMMARY_COLUMNS}, state, message_count, journal_end,
         (SELECT string_agg(m.message, ',' ORDER BY m.idx) FROM keel_run_messages m
          WHERE m.run_id = r.run_id AND m.idx < r.message_count) AS messages,
         (SELECT string_agg(j.entry, ',' ORDER BY j.idx) FROM keel_run_journal j
          WHERE j.run_id = r.run_id AND j.idx < r.journal_end) AS journal
       FROM keel_runs r WHERE run_id = $1`,
      [runId],
    );
    const row = result.rows[0];
    return row === undefined ? undefined : runRecordFromRow(row);
  }

  async saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    return this.commitStep(runId, { checkpoint });
  }

  async commitStep(runId: string, commit: StepCommit): Promise<number> {
    const creates = commit.create !== undefined;
    const result = await this.query<{ version: number }>(
      creates ? CREATE_STEP_SQL : COMMIT_STEP_SQL,
      commitStepValues(runId, commit),
      creates ? CREATE_STEP_STATEMENT : COMMIT_STEP_STATEMENT,
    );
    const row = result.rows[0];
    if (row !== undefined) return row.version;
    const completed = (commit.toolsCompleted ?? []).map((entry) => ({
      idempotency_key: entry.idempotencyKey,
    }));
    const refused = await this.query<RefusedCommitRow>(REFUSED_COMMIT_SQL, [
      runId,
      JSON.stringify(completed),
    ]);
    throw refusedCommitError(runId, commit, refused.rows[0]);
  }

  async listRuns(filter: { status?: RunStatus; limit?: number } = {}): Promise<RunSummary[]> {
    const limit = filter.limit ?? 100;
    const result =
      filter.status === undefined
        ? await this.query<RunRow>(
            `SELECT ${RUN_SUMMARY_COLUMNS} FROM keel_runs ORDER BY created_at_ms DESC, run_id DESC LIMIT $1`,
            [limit],
          )
        : await this.query<RunRow>(
            `SELECT ${RUN_SUMMARY_COLUMNS} FROM keel_runs WHERE status = $1
             ORDER BY created_at_ms DESC, run_id DESC LIMIT $2`,
            [filter.status, limit],
          );
    return result.rows.map(runSummaryFromRow);
  }

  async acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease> {
    const expiresAtMs = nowMs + ttlMs;
    const result = await this.query(
      `UPDATE keel_runs SET lease_owner = $2, lease_expires_at_ms = $3
       WHERE run_id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at_ms <= $4)`,
      [runId, owner, expiresAtMs, nowMs],
    );
    if (result.rowCount === 1) return { runId, owner, expiresAtMs };
    const current = await this.query<{ lease_owner: string; lease_expires_at_ms: string }>(
      'SELECT lease_owner, lease_expires_at_ms FROM keel_runs WHERE run_id = $1',
      [runId],
    );
    const row = current.rows[0];
    throw leaseConflict(
      runId,
      row === undefined
        ? undefined
        : { holder: row.lease_owner, expiresAtMs: Number(row.lease_expires_at_ms) },
      nowMs,
    );
  }

  async releaseLease(runId: string, owner: string): Promise<void> {
    await this.query(
      'UPDATE keel_runs SET lease_owner = NULL, lease_expires_at_ms = NULL WHERE run_id = $1 AND lease_owner = $2',
      [runId, owner],
    );
  }

  async recordToolStarted(entry: StartedToolCall): Promise<void> {
    await this.query(
      `INSERT INTO keel_ledger (run_id, idempotency_key, step, call_index, tool_name, status, started_at_ms)
       VALUES ($1, $2, $3, $4, $5, 'started', $6) ON CONFLICT (run_id, idempotency_key) DO NOTHING`,
      [entry.runId, entry.idempotencyKey, entry.step, entry.callIndex, entry.toolName, entry.startedAtMs],
    );
  }

  async recordToolCompleted(runId: string, idempotencyKey: string, result: JsonValue, completedAtMs: number) {
    const update = await this.query(
      `UPDATE keel_ledger SET status = 'completed', result = $3, completed_at_ms = $4
       WHERE run_id = $1 AND idempotency_key = $2 AND status = 'started'`,
      [runId, idempotencyKey, JSON.stringify(result), completedAtMs],
    );
    if (update.rowCount === 1) return;
    const existing = await this.query(
      'SELECT 1 FROM keel_ledger WHERE run_id = $1 AND idempotency_key = $2',
      [runId, idempotencyKey],
    );
    if (existing.rowCount === 0) throw toolCallNotStarted(runId, idempotencyKey);
  }

  async ledger(runId: string): Promise<LedgerEntry[]> {
    const result = await this.query<LedgerRow>(
      'SELECT * FROM keel_ledger WHERE run_id = $1 ORDER BY step, call_index',
      [runId],
    );
    return result.rows.map(ledgerEntryFromRow);
  }

  async requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus> {
    // The CASE reads the row as it was before the update: a live lease keeps a running run running.
    const updated = await this.query<{ status: RunStatus }>(
      `UPDATE keel_runs SET cancel_reason = $2, cancel_requested_at_ms = $3, version = version + 1, updated_at_ms = $3,
         status = CASE WHEN status = 'running' AND lease_owner IS NOT NULL AND lease_expires_at_ms > $3
                       THEN status ELSE 'cancelled' END
       WHERE run_id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')
       RETURNING status`,
      [runId, reason, nowMs],
    );
    const row = updated.rows[0];
    if (row !== undefined) return row.status;
    const current = await this.query<{ status: RunStatus }>(
      'SELECT status FROM keel_runs WHERE run_id = $1',
      [runId],
    );
    const existing = current.rows[0];
    if (existing === undefined) throw runNotFound(runId);
    return existing.status;
  }

  async loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return loadSession(this.query.bind(this), sessionId);
  }

  async appendSessionTurn(sessionId: string, append: SessionAppend): Promise<number> {
    return this.transaction((query) => appendTurn(query, sessionId, append));
  }

  async releaseSession(sessionId: string, runId: string, nowMs: number): Promise<void> {
    await releaseSession(this.query.bind(this), sessionId, runId, nowMs);
  }

  async listSessions(filter: { limit?: number } = {}): Promise<SessionSummary[]> {
    return listSessions(this.query.bind(this), filter.limit ?? 100);
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.transaction((query) => deleteSession(query, sessionId));
  }

  async close(): Promise<void> {
    if (this.ownsPool && !this.pool.ended) await this.pool.end();
  }

  /**
   * Runs `work` in a transaction on one connection of the pool: committed when it resolves, rolled back when it
   * throws. A connection that failed (not a KeelError, such as a conflict this store decided) is dropped from the pool.
   */
  private async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      await this.migrateOnce();
      client = await this.pool.connect();
    } catch (error) {
      throw toStoreError(error);
    }
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await work(<Row extends pg.QueryResultRow>(text: string, values: unknown[]) =>
        client.query<Row>(text, values),
      );
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (!KeelError.isInstance(error)) broken = error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw toStoreError(error);
    } finally {
      client.release(broken === undefined ? undefined : (broken as Error));
    }
  }

  /** Runs a statement on the pool; a `name` makes it a prepared statement, parsed and planned once a connection. */
  private async query<Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<Row>> {
    try {
      await this.migrateOnce();
      return await this.pool.query<Row>(name === undefined ? { text, values } : { name, text, values });
    } catch (error) {
      throw toStoreError(error);
    }
  }

  private migrateOnce(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.pool.connect();
      try {
        await migrate(client);
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      // A failed migration (the server was down) is tried again on the next call.
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }
}
