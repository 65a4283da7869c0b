import {
  checkpointConflict,
  journalEndAfter,
  journalTextsOf,
  messageCountAfter,
  messageLogGap,
  messageTextsOf,
  type StepCommit,
  toolCallNotStarted,
} from '@keel/core/store';
import type Database from 'better-sqlite3';

/** The columns a checkpoint sets beside its version and status (the lease renewed, or freed with `@release`). */
const CHECKPOINT_COLUMNS = `schema_version = @schemaVersion, state = @state, updated_at_ms = @updatedAtMs,
  message_count = @messageCount, journal_end = @journalEnd,
  lease_owner = CASE WHEN @release = 1 THEN NULL ELSE lease_owner END,
  lease_expires_at_ms = CASE WHEN @release = 1 THEN NULL ELSE COALESCE(@leaseExpiresAtMs, lease_expires_at_ms) END`;

/** The lease columns and version of a run row. */
export interface LeaseRow {
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  version: number;
}

/**
 * `RunStore.commitStep` (and `saveCheckpoint`) on SQLite: the ledger writes, the checkpoint (which renews or frees
 * the lease in the same statement), its messages in the run's log, its journal entries in the journal log and the checks, in one immediate transaction, so a
 * refused checkpoint rolls everything back.
 */
export class SqliteStepCommit {
  private readonly statements;
  private readonly commit: (runId: string, commit: StepCommit) => number;

  constructor(database: Database.Database) {
    this.statements = {
      checkpoint: database.prepare(
        `UPDATE runs SET version = version + 1, status = @status, ${CHECKPOINT_COLUMNS}
         WHERE run_id = @runId AND version = @expectedVersion AND lease_owner = @owner`,
      ),
      // Without `status` among the columns set, SQLite leaves the runs_by_status index alone: a page less a write.
      checkpointSameStatus: database.prepare(
        `UPDATE runs SET version = version + 1, ${CHECKPOINT_COLUMNS}
         WHERE run_id = @runId AND version = @expectedVersion AND lease_owner = @owner AND status = @status`,
      ),
      // A run created by its first commit (`StepCommit.create`): its row as the checkpoint writes it, at version 1.
      create: database.prepare(
        `INSERT INTO runs (run_id, agent_name, status, version, schema_version, state, created_at_ms, updated_at_ms,
           lease_owner, lease_expires_at_ms, message_count, journal_end)
         VALUES (@runId, @agentName, @status, 1, @schemaVersion, @state, @createdAtMs, @updatedAtMs,
           CASE WHEN @release = 1 THEN NULL ELSE @owner END,
           CASE WHEN @release = 1 THEN NULL ELSE COALESCE(@leaseExpiresAtMs, @updatedAtMs) END,
           @messageCount, @journalEnd)
         ON CONFLICT (run_id) DO NOTHING`,
      ),
      loadLease: database.prepare(
        'SELECT lease_owner, lease_expires_at_ms, version FROM runs WHERE run_id = ?',
      ),
      logs: database.prepare('SELECT message_count, journal_end FROM runs WHERE run_id = ?'),
      putEntry: database.prepare(
        `INSERT INTO run_journal (run_id, idx, entry) VALUES (?, ?, ?)
         ON CONFLICT (run_id, idx) DO UPDATE SET entry = excluded.entry`,
      ),
      // Two range deletes, each run only when it has rows to find (a statement a step otherwise, ~9% of it).
      dropEntriesBefore: database.prepare('DELETE FROM run_journal WHERE run_id = ? AND idx < ?'),
      dropEntriesFrom: database.prepare('DELETE FROM run_journal WHERE run_id = ? AND idx >= ?'),
      dropJournal: database.prepare('DELETE FROM run_journal WHERE run_id = ?'),
      putMessages: database.prepare(
        `INSERT INTO run_messages (run_id, idx, message) VALUES (?, ?, ?)
         ON CONFLICT (run_id, idx) DO UPDATE SET message = excluded.message`,
      ),
      dropMessages: database.prepare('DELETE FROM run_messages WHERE run_id = ? AND idx >= ?'),
      firstRowFrom: database
        .prepare('SELECT idx FROM run_messages WHERE run_id = ? AND idx >= ? ORDER BY idx LIMIT 1')
        .pluck(),
      lastRowBefore: database.prepare(
        'SELECT idx, message FROM run_messages WHERE run_id = ? AND idx < ? ORDER BY idx DESC LIMIT 1',
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
      // A call that started and completed since the last write (StepCommit.toolsRan): a started entry is completed.
      ranTool: database.prepare(
        `INSERT INTO ledger (run_id, idempotency_key, step, call_index, tool_name, status, result, started_at_ms,
           completed_at_ms)
         VALUES (@runId, @idempotencyKey, @step, @callIndex, @toolName, 'completed', @result, @startedAtMs,
           @completedAtMs)
         ON CONFLICT (run_id, idempotency_key) DO UPDATE SET status = 'completed', result = excluded.result,
           completed_at_ms = excluded.completed_at_ms
         WHERE status = 'started'`,
      ),
      ledgerEntry: database.prepare('SELECT 1 FROM ledger WHERE run_id = ? AND idempotency_key = ?'),
    };
    this.commit = database.transaction((runId: string, commit: StepCommit) => this.apply(runId, commit))
      .immediate as (runId: string, commit: StepCommit) => number;
  }

  /** Applies the commit in one transaction; resolves with the run's new version. */
  run(runId: string, commit: StepCommit): number {
    return this.commit(runId, commit);
  }

  private apply(runId: string, commit: StepCommit): number {
    const { checkpoint } = commit;
    const { statements } = this;
    const log = checkpoint.messages;
    const create = commit.create;
    const stored =
      create === undefined
        ? (statements.logs.get(runId) as
            | { message_count: number | null; journal_end: number | null }
            | undefined)
        : undefined;
    const storedCount = stored?.message_count;
    const journal = checkpoint.journal;
    const values = {
      runId,
      expectedVersion: checkpoint.expectedVersion,
      owner: checkpoint.owner,
      status: checkpoint.status,
      schemaVersion: checkpoint.schemaVersion,
      state: commit.stateText ?? JSON.stringify(checkpoint.state),
      updatedAtMs: checkpoint.nowMs,
      release: commit.releaseLease === true ? 1 : 0,
      leaseExpiresAtMs: commit.leaseTtlMs === undefined ? null : checkpoint.nowMs + commit.leaseTtlMs,
      messageCount: log === undefined ? null : messageCountAfter(log),
      journalEnd: journal === undefined ? null : journalEndAfter(journal),
    };
    // A running run's checkpoints keep its status: the statement that does not set it is tried first (it fails only
    // for the first checkpoint of a resumed run). A run's end sets it.
    const changes =
      create !== undefined
        ? checkpoint.expectedVersion === 0
          ? statements.create.run({ ...values, agentName: create.agentName, createdAtMs: create.createdAtMs })
              .changes
          : 0
        : checkpoint.status === 'running' && statements.checkpointSameStatus.run(values).changes === 1
          ? 1
          : statements.checkpoint.run(values).changes;
    if (changes !== 1) {
      const current = statements.loadLease.get(runId) as LeaseRow | undefined;
      throw checkpointConflict(
        runId,
        checkpoint,
        current === undefined ? undefined : { leaseOwner: current.lease_owner, version: current.version },
      );
    }
    // Completions before starts: a call started in this same commit does not count. A throw rolls back.
    for (const completed of commit.toolsCompleted ?? []) {
      const { changes: completedNow } = statements.completeTool.run({
        runId,
        idempotencyKey: completed.idempotencyKey,
        result: JSON.stringify(completed.result),
        completedAtMs: completed.completedAtMs,
      });
      // None changed: completed already (a write sent again), or never started.
      if (completedNow === 0 && statements.ledgerEntry.get(runId, completed.idempotencyKey) === undefined)
        throw toolCallNotStarted(runId, completed.idempotencyKey);
    }
    this.writeMessages(runId, log, storedCount ?? 0);
    if (journal !== undefined) {
      // Entries dropped from the journal's front, and those this write rewrites (the log holds entries up to its end).
      if (journal.dropped > 0) statements.dropEntriesBefore.run(runId, journal.dropped);
      if (journal.start < (stored?.journal_end ?? 0)) statements.dropEntriesFrom.run(runId, journal.start);
      const texts = journalTextsOf(journal);
      for (let index = 0; index < texts.length; index++)
        statements.putEntry.run(runId, journal.start + index, texts[index]);
    } else if (stored?.journal_end !== null && stored?.journal_end !== undefined) {
      statements.dropJournal.run(runId);
    }
    for (const entry of commit.toolsStarted ?? []) statements.startTool.run(entry);
    for (const entry of commit.toolsRan ?? []) {
      statements.ranTool.run({ ...entry, result: JSON.stringify(entry.result) });
    }
    return checkpoint.expectedVersion + 1;
  }

  /**
   * The checkpoint's messages into the run's log, as one row (a row holds the messages up to the next row's index): the log cut at `start` first
   * when it holds more (a rewrite, or a write taken before the last one settled), or, for a checkpoint whose state
   * holds its messages inline, the log dropped. A throw rolls the transaction back.
   */
  private writeMessages(runId: string, log: StepCommit['checkpoint']['messages'], storedCount: number): void {
    const { statements } = this;
    if (log === undefined) {
      if (storedCount > 0) statements.dropMessages.run(runId, 0);
      return;
    }
    if (log.start > storedCount) throw messageLogGap(runId, log.start, storedCount);
    if (log.start < storedCount) this.cutLog(runId, log.start, storedCount);
    const texts = messageTextsOf(log);
    if (texts.length > 0) statements.putMessages.run(runId, log.start, texts.join(','));
  }

  /**
   * Drops the log's messages from `start` on. A row holds the messages from its `idx` to the next row's (or the log's
   * end): a row that begins before `start` and reaches past it keeps only its messages before `start`.
   */
  private cutLog(runId: string, start: number, storedCount: number): void {
    const { statements } = this;
    const next = (statements.firstRowFrom.get(runId, start) as number | undefined) ?? storedCount;
    if (next > start && start > 0) {
      const row = statements.lastRowBefore.get(runId, start) as { idx: number; message: string } | undefined;
      if (row !== undefined) {
        const kept = (JSON.parse(`[${row.message}]`) as unknown[]).slice(0, start - row.idx);
        statements.putMessages.run(runId, row.idx, kept.map((message) => JSON.stringify(message)).join(','));
      }
    }
    statements.dropMessages.run(runId, start);
  }
}
