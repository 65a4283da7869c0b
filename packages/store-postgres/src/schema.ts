import type { PoolClient } from 'pg';

/** Each entry moves the schema one version forward. Never edit a released entry; append a new one. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE keel_runs (
     run_id TEXT PRIMARY KEY,
     agent_name TEXT NOT NULL,
     status TEXT NOT NULL,
     version INTEGER NOT NULL,
     schema_version INTEGER NOT NULL,
     state TEXT NOT NULL,
     created_at_ms BIGINT NOT NULL,
     updated_at_ms BIGINT NOT NULL,
     lease_owner TEXT,
     lease_expires_at_ms BIGINT
   );
   CREATE INDEX keel_runs_by_status ON keel_runs (status, created_at_ms);
   CREATE INDEX keel_runs_by_created ON keel_runs (created_at_ms);
   CREATE TABLE keel_ledger (
     run_id TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     step INTEGER NOT NULL,
     call_index INTEGER NOT NULL,
     tool_name TEXT NOT NULL,
     status TEXT NOT NULL,
     result TEXT,
     started_at_ms BIGINT NOT NULL,
     completed_at_ms BIGINT,
     PRIMARY KEY (run_id, idempotency_key)
   );`,
  // 2: cancellation requested from another process (RunStore.requestCancellation).
  `ALTER TABLE keel_runs ADD COLUMN cancel_reason TEXT, ADD COLUMN cancel_requested_at_ms BIGINT;`,
  // 3: sessions, a conversation kept across runs (one turn per completed run).
  `CREATE TABLE keel_sessions (
     session_id TEXT PRIMARY KEY,
     agent_name TEXT NOT NULL,
     version INTEGER NOT NULL,
     message_count INTEGER NOT NULL,
     active_run_id TEXT,
     created_at_ms BIGINT NOT NULL,
     updated_at_ms BIGINT NOT NULL
   );
   CREATE INDEX keel_sessions_by_updated ON keel_sessions (updated_at_ms);
   CREATE TABLE keel_session_turns (
     session_id TEXT NOT NULL,
     turn INTEGER NOT NULL,
     run_id TEXT NOT NULL,
     messages TEXT NOT NULL,
     appended_at_ms BIGINT NOT NULL,
     PRIMARY KEY (session_id, turn),
     UNIQUE (session_id, run_id)
   );`,
  // 4: each run's conversation as a log, a row per message; message_count is how many of them the log holds, NULL
  // for a run whose state holds its messages inline (every run written before this migration, which still loads as
  // it is: its next checkpoint moves its messages to the log).
  `ALTER TABLE keel_runs ADD COLUMN message_count INTEGER;
   CREATE TABLE keel_run_messages (
     run_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     message TEXT NOT NULL,
     PRIMARY KEY (run_id, idx)
   );`,
  // 5: each run's event journal as a log, a row per entry at its position in the journal; journal_end is where the
  // log ends, NULL for a run whose state holds its journal inline (every run written before this migration: its next
  // checkpoint moves its journal to the log).
  `ALTER TABLE keel_runs ADD COLUMN journal_end INTEGER;
   CREATE TABLE keel_run_journal (
     run_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     entry TEXT NOT NULL,
     PRIMARY KEY (run_id, idx)
   );`,
];

// Any fixed number: serialises migrations across processes that start at the same moment.
const MIGRATION_LOCK = 7_326_115;

/** Brings the database to the newest schema under an advisory lock, so concurrent starts are safe. */
export async function migrate(client: PoolClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS keel_schema (version INTEGER NOT NULL)');
    const result = await client.query<{ version: number }>('SELECT version FROM keel_schema');
    let current = result.rows[0]?.version ?? 0;
    if (result.rows.length === 0) await client.query('INSERT INTO keel_schema (version) VALUES (0)');
    while (current < MIGRATIONS.length) {
      await client.query(MIGRATIONS[current]!);
      current += 1;
      await client.query('UPDATE keel_schema SET version = $1', [current]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
