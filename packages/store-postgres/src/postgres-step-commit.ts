import {
  checkpointConflict,
  journalTextsOf,
  messageLogGap,
  messageTextsOf,
  type StartedToolCall,
  type StepCommit,
  toolCallNotStarted,
} from '@keel/core/store';

/**
 * `RunStore.commitStep` (and `saveCheckpoint`) on PostgreSQL as one statement, so one round trip and one implicit
 * transaction: the checkpoint (renewing or freeing the lease in the same UPDATE) runs only when the version and lease
 * holder match, every completion names a call in the ledger and its message log write starts within the log; the
 * ledger and log writes run only when the checkpoint did (`EXISTS (SELECT 1 FROM checkpoint)`). Ledger entries travel
 * as JSON arrays (calls that ran within the write, `StepCommit.toolsRan`, with the starts: their result and end set) and messages as a text array, so any number of them fits the one statement. The log's rows from
 * `start` on are upserted and those past its new end deleted (disjoint rows: sub-statements of one statement must
 * not touch a row twice); a checkpoint without messages ($12 NULL) deletes the run's log. The journal log likewise
 * ($14 start, $15 entries, $16 dropped): rows from `start` on upserted, those below `dropped` or past the new end
 * deleted, and all of them for a checkpoint whose journal is inline ($14 NULL).
 */
export const COMMIT_STEP_SQL = commitSql(`
  UPDATE keel_runs SET version = version + 1, status = $4, schema_version = $5, state = $6, updated_at_ms = $7,
    lease_owner = CASE WHEN $8::boolean THEN NULL ELSE lease_owner END,
    lease_expires_at_ms = CASE WHEN $8::boolean THEN NULL ELSE COALESCE($9::bigint, lease_expires_at_ms) END,
    message_count = CASE WHEN $12::integer IS NULL THEN NULL ELSE $12::integer + cardinality($13::text[]) END,
    journal_end = CASE WHEN $14::integer IS NULL THEN NULL ELSE $14::integer + cardinality($15::text[]) END
  WHERE run_id = $1 AND version = $2 AND lease_owner = $3
    AND ($12::integer IS NULL OR $12::integer <= COALESCE(message_count, 0))
    AND NOT EXISTS (
      SELECT 1 FROM completions c
      WHERE NOT EXISTS (SELECT 1 FROM keel_ledger l WHERE l.run_id = $1 AND l.idempotency_key = c.idempotency_key)
    )
  RETURNING version`);

/**
 * {@link COMMIT_STEP_SQL} for a commit that creates its run (`StepCommit.create`): the checkpoint is the INSERT of the
 * run's row at version 1 ($17 agent name, $18 creation time), leased to the writer unless the lease is freed; it
 * inserts nothing when the run exists, when `expectedVersion` is not 0, when the message log write does not start at
 * 0, or when a completion is given (a new run's ledger is empty). The other writes run only when it did.
 */
export const CREATE_STEP_SQL = commitSql(`
  INSERT INTO keel_runs (run_id, agent_name, status, version, schema_version, state, created_at_ms, updated_at_ms,
    lease_owner, lease_expires_at_ms, message_count, journal_end)
  SELECT $1::text, $17::text, $4::text, 1, $5::integer, $6::text, $18::bigint, $7::bigint,
    CASE WHEN $8::boolean THEN NULL ELSE $3::text END,
    CASE WHEN $8::boolean THEN NULL ELSE COALESCE($9::bigint, $7::bigint) END,
    CASE WHEN $12::integer IS NULL THEN NULL ELSE $12::integer + cardinality($13::text[]) END,
    CASE WHEN $14::integer IS NULL THEN NULL ELSE $14::integer + cardinality($15::text[]) END
  WHERE $2::integer = 0 AND COALESCE($12::integer, 0) = 0 AND NOT EXISTS (SELECT 1 FROM completions)
  ON CONFLICT (run_id) DO NOTHING
  RETURNING version`);

/** The commit statement around `checkpoint`, the sub-statement that writes the run's row and returns its version. */
function commitSql(checkpoint: string): string {
  return `
WITH completions AS (
  SELECT * FROM json_to_recordset($10::json) AS c(idempotency_key text, result text, completed_at_ms bigint)
), checkpoint AS (${checkpoint}
), put_messages AS (
  INSERT INTO keel_run_messages (run_id, idx, message)
  SELECT $1, $12::integer + m.ordinality - 1, m.message
  FROM unnest($13::text[]) WITH ORDINALITY AS m(message, ordinality)
  WHERE EXISTS (SELECT 1 FROM checkpoint)
  ON CONFLICT (run_id, idx) DO UPDATE SET message = EXCLUDED.message
), dropped_messages AS (
  DELETE FROM keel_run_messages
  WHERE run_id = $1 AND idx >= COALESCE($12::integer + cardinality($13::text[]), 0)
    AND EXISTS (SELECT 1 FROM checkpoint)
), put_journal AS (
  INSERT INTO keel_run_journal (run_id, idx, entry)
  SELECT $1, $14::integer + e.ordinality - 1, e.entry
  FROM unnest($15::text[]) WITH ORDINALITY AS e(entry, ordinality)
  WHERE EXISTS (SELECT 1 FROM checkpoint)
  ON CONFLICT (run_id, idx) DO UPDATE SET entry = EXCLUDED.entry
), dropped_journal AS (
  DELETE FROM keel_run_journal
  WHERE run_id = $1 AND EXISTS (SELECT 1 FROM checkpoint)
    AND ($14::integer IS NULL OR idx < $16::integer OR idx >= $14::integer + cardinality($15::text[]))
), started AS (
  INSERT INTO keel_ledger (run_id, idempotency_key, step, call_index, tool_name, status, started_at_ms)
  SELECT $1, s.idempotency_key, s.step, s.call_index, s.tool_name, 'started', s.started_at_ms
  FROM json_to_recordset($11::json) AS s(idempotency_key text, step integer, call_index integer, tool_name text,
    started_at_ms bigint, completed_at_ms bigint)
  WHERE s.completed_at_ms IS NULL AND EXISTS (SELECT 1 FROM checkpoint)
  ON CONFLICT (run_id, idempotency_key) DO NOTHING
), ran AS (
  INSERT INTO keel_ledger (run_id, idempotency_key, step, call_index, tool_name, status, result, started_at_ms,
    completed_at_ms)
  SELECT $1, s.idempotency_key, s.step, s.call_index, s.tool_name, 'completed', s.result, s.started_at_ms,
    s.completed_at_ms
  FROM json_to_recordset($11::json) AS s(idempotency_key text, step integer, call_index integer, tool_name text,
    started_at_ms bigint, result text, completed_at_ms bigint)
  WHERE s.completed_at_ms IS NOT NULL AND EXISTS (SELECT 1 FROM checkpoint)
  ON CONFLICT (run_id, idempotency_key) DO UPDATE
    SET status = 'completed', result = EXCLUDED.result, completed_at_ms = EXCLUDED.completed_at_ms
    WHERE keel_ledger.status = 'started'
), completed AS (
  UPDATE keel_ledger l SET status = 'completed', result = c.result, completed_at_ms = c.completed_at_ms
  FROM completions c
  WHERE l.run_id = $1 AND l.idempotency_key = c.idempotency_key AND l.status = 'started'
    AND EXISTS (SELECT 1 FROM checkpoint)
)
SELECT version FROM checkpoint`;
}

/** The parameters of {@link COMMIT_STEP_SQL} for a commit (and of {@link CREATE_STEP_SQL} for one with `create`). */
export function commitStepValues(runId: string, commit: StepCommit): unknown[] {
  const { checkpoint, create } = commit;
  const values = [
    runId,
    checkpoint.expectedVersion,
    checkpoint.owner,
    checkpoint.status,
    checkpoint.schemaVersion,
    commit.stateText ?? JSON.stringify(checkpoint.state),
    checkpoint.nowMs,
    commit.releaseLease === true,
    commit.leaseTtlMs === undefined ? null : checkpoint.nowMs + commit.leaseTtlMs,
    JSON.stringify(
      (commit.toolsCompleted ?? []).map((completed) => ({
        idempotency_key: completed.idempotencyKey,
        result: JSON.stringify(completed.result),
        completed_at_ms: completed.completedAtMs,
      })),
    ),
    JSON.stringify([
      ...(commit.toolsStarted ?? []).map(startedRow),
      // A call that started and completed since the last write (StepCommit.toolsRan): written completed at once.
      ...(commit.toolsRan ?? []).map((entry) => ({
        ...startedRow(entry),
        result: JSON.stringify(entry.result),
        completed_at_ms: entry.completedAtMs,
      })),
    ]),
    checkpoint.messages === undefined ? null : checkpoint.messages.start,
    checkpoint.messages === undefined ? [] : messageTextsOf(checkpoint.messages),
    checkpoint.journal === undefined ? null : checkpoint.journal.start,
    checkpoint.journal === undefined ? [] : journalTextsOf(checkpoint.journal),
    checkpoint.journal === undefined ? null : checkpoint.journal.dropped,
  ];
  if (create !== undefined) values.push(create.agentName, create.createdAtMs);
  return values;
}

/** A ledger entry's start as a row of the started JSON. */
function startedRow(entry: StartedToolCall) {
  return {
    idempotency_key: entry.idempotencyKey,
    step: entry.step,
    call_index: entry.callIndex,
    tool_name: entry.toolName,
    started_at_ms: entry.startedAtMs,
  };
}

/** The state a refused commit found, read afterwards to say why it was refused. */
export interface RefusedCommitRow {
  lease_owner: string | null;
  version: number;
  message_count: number | null;
  /** The first completion the ledger does not hold, if any. */
  missing_key: string | null;
}

/** Reads why a commit was refused (a second round trip, on the failure path only). */
export const REFUSED_COMMIT_SQL = `
SELECT r.lease_owner, r.version, r.message_count,
  (SELECT c.idempotency_key FROM json_to_recordset($2::json) AS c(idempotency_key text)
   WHERE NOT EXISTS (SELECT 1 FROM keel_ledger l WHERE l.run_id = $1 AND l.idempotency_key = c.idempotency_key)
   LIMIT 1) AS missing_key
FROM keel_runs r WHERE r.run_id = $1`;

/** The error for a refused commit, from what {@link REFUSED_COMMIT_SQL} found. */
export function refusedCommitError(
  runId: string,
  commit: StepCommit,
  row: RefusedCommitRow | undefined,
): Error {
  const { owner, expectedVersion, messages } = commit.checkpoint;
  const current = row !== undefined && row.lease_owner === owner && row.version === expectedVersion;
  if (current && row.missing_key !== null) return toolCallNotStarted(runId, row.missing_key);
  if (current && messages !== undefined && messages.start > (row.message_count ?? 0))
    return messageLogGap(runId, messages.start, row.message_count ?? 0);
  return checkpointConflict(
    runId,
    commit.checkpoint,
    row === undefined ? undefined : { leaseOwner: row.lease_owner, version: row.version },
  );
}
