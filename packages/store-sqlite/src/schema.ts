import type Database from 'better-sqlite3';

/** Each entry moves the database schema one version forward. Never edit a released entry; append a new one. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     run_id TEXT PRIMARY KEY,
     agent_name TEXT NOT NULL,
     status TEXT NOT NULL,
     version INTEGER NOT NULL,
     schema_version INTEGER NOT NULL,
     state TEXT NOT NULL,
     created_at_ms INTEGER NOT NULL,
     updated_at_ms INTEGER NOT NULL,
     lease_owner TEXT,
     lease_expires_at_ms INTEGER
   );
   CREATE INDEX runs_by_status ON runs (status, created_at_ms);
   CREATE INDEX runs_by_created ON runs (created_at_ms);
   CREATE TABLE ledger (
     run_id TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     step INTEGER NOT NULL,
     call_index INTEGER NOT NULL,
     tool_name TEXT NOT NULL,
     status TEXT NOT NULL,
     result TEXT,
     started_at_ms INTEGER NOT NULL,
     completed_at_ms INTEGER,
     PRIMARY KEY (run_id, idempotency_key)
   );`,
  // 2: cancellation requested from another process (RunStore.requestCancellation).
  `ALTER TABLE runs ADD COLUMN cancel_reason TEXT;
   ALTER TABLE runs ADD COLUMN cancel_requested_at_ms INTEGER;`,
  // 3: sessions, a conversation kept across runs (one turn per completed run).
  `CREATE TABLE sessions (
     session_id TEXT PRIMARY KEY,
     agent_name TEXT NOT NULL,
     version INTEGER NOT NULL,
     message_count INTEGER NOT NULL,
     active_run_id TEXT,
     created_at_ms INTEGER NOT NULL,
     updated_at_ms INTEGER NOT NULL
   );
   CREATE INDEX sessions_by_updated ON sessions (updated_at_ms);
   CREATE TABLE session_turns (
     session_id TEXT NOT NULL,
     turn INTEGER NOT NULL,
     run_id TEXT NOT NULL,
     messages TEXT NOT NULL,
     appended_at_ms INTEGER NOT NULL,
     PRIMARY KEY (session_id, turn),
     UNIQUE (session_id, run_id)
   );`,
  // 4: each run's conversation as a log, a row per message; message_count is how many of them the log holds, NULL
  // for a run whose state holds its messages inline (every run written before this migration, which still loads as
  // it is: its next checkpoint moves its messages to the log).
  `ALTER TABLE runs ADD COLUMN message_count INTEGER;
   CREATE TABLE run_messages (
     run_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     message TEXT NOT NULL,
     PRIMARY KEY (run_id, idx)
   ) WITHOUT ROWID;`,
  // 5: each run's event journal as a log, a row per entry at its position in the journal; journal_end is where the
  // log ends, NULL for a run whose state holds its journal inline (every run written before this migration: its next
  // checkpoint moves its journal to the log).
  `ALTER TABLE runs ADD COLUMN journal_end INTEGER;
   CREATE TABLE run_journal (
     run_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     entry TEXT NOT NULL,
     PRIMARY KEY (run_id, idx)
   ) WITHOUT ROWID;`,
  // 6: the ledger keyed by its primary key alone (WITHOUT ROWID): a call's entry is one B-tree's page to write, not a
  // table's and its key index's.
  `CREATE TABLE ledger_by_key (
     run_id TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     step INTEGER NOT NULL,
     call_index INTEGER NOT NULL,
     tool_name TEXT NOT NULL,
     status TEXT NOT NULL,
     result TEXT,
     started_at_ms INTEGER NOT NULL,
     completed_at_ms INTEGER,
     PRIMARY KEY (run_id, idempotency_key)
   ) WITHOUT ROWID;
   INSERT INTO ledger_by_key SELECT run_id, idempotency_key, step, call_index, tool_name, status, result,
     started_at_ms, completed_at_ms FROM ledger;
   DROP TABLE ledger;
   ALTER TABLE ledger_by_key RENAME TO ledger;`,
];

/** Brings the database to the newest schema, in one transaction per step; safe to run from several processes. */
export function migrate(database: Database.Database): void {
  database.exec('CREATE TABLE IF NOT EXISTS keel_schema (version INTEGER NOT NULL)');
  const step = database.transaction(() => {
    const row = database.prepare('SELECT version FROM keel_schema').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current >= MIGRATIONS.length) return false;
    database.exec(MIGRATIONS[current]!);
    if (row === undefined) database.prepare('INSERT INTO keel_schema (version) VALUES (?)').run(current + 1);
    else database.prepare('UPDATE keel_schema SET version = ?').run(current + 1);
    return true;
  });
  while (step.immediate()) {
    // Loop until every migration has been applied.
  }
}
