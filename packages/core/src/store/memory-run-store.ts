import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type {
  CheckpointWrite,
  Lease,
  LedgerEntry,
  NewRun,
  RunRecord,
  RunStatus,
  RunStore,
  RunSummary,
  SessionAppend,
  SessionRecord,
  SessionSummary,
  StartedToolCall,
  StepCommit,
} from '../spec/run-store.js';
import {
  checkpointConflict,
  leaseConflict,
  messageLogGap,
  runNotFound,
  toolCallNotStarted,
} from './conflicts.js';
import { journalEndAfter, journalTextsOf } from './journal-log.js';
import { checkNewRunLog, messageCountAfter, messageTextsOf } from './message-log.js';
import { sessionAppendConflict, sessionClaimConflict } from './session-conflicts.js';

/**
 * A RunStore in memory: for tests and for runs that need no durability. State is copied in and out (through JSON),
 * so callers can never mutate what is stored: a checkpoint's state, messages and journal entries are kept as the texts
 * they were written as, and parsed only when the run is loaded (a write parses nothing). Each run's conversation is kept as a log (see `RunStore.messageLog`):
 * a checkpoint copies in only the messages it adds.
 *
 * @example
 *   const store = new MemoryRunStore();
 */
export class MemoryRunStore implements RunStore {
  readonly messageLog = true;
  readonly journalLog = true;
  readonly createsInCommit = true;
  readonly ranCallsInCommit = true;
  private readonly runs = new Map<string, RunRecord>();
  /** Each run's state as its last checkpoint wrote it (text); for a run not checkpointed yet, its record's `state`. */
  private readonly stateTexts = new Map<string, string>();
  /** Each run's message log (the messages' texts), for runs whose `messageCount` is set. */
  private readonly logs = new Map<string, string[]>();
  /** Each run's journal log (the entries' texts) by position, for runs whose `journalEnd` is set. */
  private readonly journals = new Map<string, Map<number, string>>();
  private readonly leases = new Map<string, Lease>();
  private readonly ledgers = new Map<string, Map<string, LedgerEntry>>();
  private readonly sessions = new Map<string, SessionRecord>();
  private closed = false;

  async createRun(run: NewRun): Promise<RunRecord> {
    this.assertOpen();
    checkNewRunLog(run);
    const claim = run.session;
    if (claim !== undefined) {
      const session = this.sessions.get(claim.sessionId);
      const holderId = session?.activeRunId;
      const holder = holderId === undefined ? undefined : this.runs.get(holderId);
      const refused = sessionClaimConflict(
        run.runId,
        claim,
        session && { version: session.version, activeRunId: session.activeRunId ?? null },
        holder && {
          status: holder.status,
          leaseExpiresAtMs: this.leases.get(holder.runId)?.expiresAtMs ?? null,
        },
      );
      if (refused !== undefined) throw refused;
    }
    if (this.runs.has(run.runId)) {
      throw new KeelError('store.conflict', `Run ${run.runId} already exists`, {
        data: { runId: run.runId },
      });
    }
    if (claim !== undefined) {
      const session = this.sessions.get(claim.sessionId);
      if (session === undefined) {
        this.sessions.set(claim.sessionId, {
          sessionId: claim.sessionId,
          agentName: run.agentName,
          version: 0,
          messageCount: 0,
          activeRunId: run.runId,
          createdAtMs: run.createdAtMs,
          updatedAtMs: run.createdAtMs,
          turns: [],
        });
      } else {
        session.activeRunId = run.runId;
        session.updatedAtMs = run.createdAtMs;
      }
    }
    const record: RunRecord = {
      runId: run.runId,
      agentName: run.agentName,
      status: run.status,
      version: 1,
      schemaVersion: run.schemaVersion,
      state: copy(run.state),
      createdAtMs: run.createdAtMs,
      updatedAtMs: run.createdAtMs,
    };
    if (run.messages !== undefined) {
      this.logs.set(run.runId, [...messageTextsOf(run.messages)]);
      record.messageCount = messageCountAfter(run.messages);
    }
    this.runs.set(run.runId, record);
    if (run.lease !== undefined) this.leases.set(run.runId, { runId: run.runId, ...run.lease });
    return this.copyOut(record);
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    this.assertOpen();
    const record = this.runs.get(runId);
    return record === undefined ? undefined : this.copyOut(record);
  }

  async saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    this.assertOpen();
    return this.writeCheckpoint(runId, checkpoint);
  }

  async commitStep(runId: string, commit: StepCommit): Promise<number> {
    this.assertOpen();
    if (commit.create !== undefined) this.createForCommit(runId, commit);
    this.checkCheckpoint(runId, commit.checkpoint);
    this.checkMessages(runId, commit.checkpoint);
    const ledger = this.ledgers.get(runId);
    for (const completed of commit.toolsCompleted ?? []) {
      if (ledger?.has(completed.idempotencyKey) !== true)
        throw toolCallNotStarted(runId, completed.idempotencyKey);
    }
    // Synchronous from the checks on: nothing can come between them and the writes.
    for (const entry of commit.toolsStarted ?? []) this.startTool(entry);
    for (const { idempotencyKey, result, completedAtMs } of commit.toolsCompleted ?? []) {
      this.completeTool(runId, idempotencyKey, result, completedAtMs);
    }
    for (const { result, completedAtMs, ...started } of commit.toolsRan ?? []) {
      this.startTool(started);
      this.completeTool(runId, started.idempotencyKey, result, completedAtMs);
    }
    const version = this.writeCheckpoint(runId, commit.checkpoint, commit.stateText);
    const { owner, nowMs } = commit.checkpoint;
    if (commit.releaseLease === true) this.leases.delete(runId);
    else if (commit.leaseTtlMs !== undefined)
      this.leases.set(runId, { runId, owner, expiresAtMs: nowMs + commit.leaseTtlMs });
    return version;
  }

  /**
   * Creates the run a commit creates (`StepCommit.create`), at version 0 and leased to the checkpoint's owner, once
   * nothing can refuse the commit: a run with its id (`store.conflict`), a completion (a new run's ledger is empty), a
   * message log write past 0.
   */
  private createForCommit(runId: string, commit: StepCommit): void {
    const { checkpoint } = commit;
    const create = commit.create!;
    if (this.runs.has(runId) || checkpoint.expectedVersion !== 0) {
      const record = this.runs.get(runId);
      throw checkpointConflict(
        runId,
        checkpoint,
        record && { leaseOwner: this.leases.get(runId)?.owner ?? null, version: record.version },
      );
    }
    const completed = commit.toolsCompleted?.[0];
    if (completed !== undefined) throw toolCallNotStarted(runId, completed.idempotencyKey);
    if (checkpoint.messages !== undefined && checkpoint.messages.start > 0)
      throw messageLogGap(runId, checkpoint.messages.start, 0);
    this.runs.set(runId, {
      runId,
      agentName: create.agentName,
      status: checkpoint.status,
      version: 0,
      schemaVersion: checkpoint.schemaVersion,
      state: null,
      createdAtMs: create.createdAtMs,
      updatedAtMs: create.createdAtMs,
    });
    this.leases.set(runId, { runId, owner: checkpoint.owner, expiresAtMs: checkpoint.nowMs });
  }

  /** Throws what a refused checkpoint throws, unless `checkpoint` can be written now. */
  private checkCheckpoint(runId: string, checkpoint: CheckpointWrite): RunRecord {
    const record = this.runs.get(runId);
    const leaseOwner = this.leases.get(runId)?.owner ?? null;
    if (
      record === undefined ||
      leaseOwner !== checkpoint.owner ||
      record.version !== checkpoint.expectedVersion
    ) {
      throw checkpointConflict(
        runId,
        checkpoint,
        record === undefined ? undefined : { leaseOwner, version: record.version },
      );
    }
    return record;
  }

  /** Throws `store.invalid` for a message log write that starts past the log's end. */
  private checkMessages(runId: string, checkpoint: CheckpointWrite): void {
    const write = checkpoint.messages;
    const storedCount = this.runs.get(runId)?.messageCount ?? 0;
    if (write !== undefined && write.start > storedCount)
      throw messageLogGap(runId, write.start, storedCount);
  }

  private writeCheckpoint(runId: string, checkpoint: CheckpointWrite, stateText?: string): number {
    const record = this.checkCheckpoint(runId, checkpoint);
    this.checkMessages(runId, checkpoint);
    const write = checkpoint.messages;
    if (write === undefined) {
      this.logs.delete(runId);
      delete record.messageCount;
    } else {
      const log = this.logs.get(runId) ?? [];
      log.length = write.start;
      for (const text of messageTextsOf(write)) log.push(text);
      this.logs.set(runId, log);
      record.messageCount = log.length;
    }
    this.writeJournal(record, checkpoint);
    record.version += 1;
    record.status = checkpoint.status;
    record.schemaVersion = checkpoint.schemaVersion;
    // Kept as text: the copy a write owes is made by the parse on load.
    this.stateTexts.set(runId, stateText ?? JSON.stringify(checkpoint.state));
    record.state = null;
    record.updatedAtMs = checkpoint.nowMs;
    return record.version;
  }

  /** The checkpoint's journal entries into the run's journal log, or the log dropped for a journal inline. */
  private writeJournal(record: RunRecord, checkpoint: CheckpointWrite): void {
    const write = checkpoint.journal;
    if (write === undefined) {
      this.journals.delete(record.runId);
      delete record.journalEnd;
      return;
    }
    const log = this.journals.get(record.runId) ?? new Map<number, string>();
    for (const position of [...log.keys()]) {
      if (position < write.dropped || position >= write.start) log.delete(position);
    }
    journalTextsOf(write).forEach((text, index) => {
      log.set(write.start + index, text);
    });
    this.journals.set(record.runId, log);
    record.journalEnd = journalEndAfter(write);
  }

  async listRuns(filter: { status?: RunStatus; limit?: number } = {}): Promise<RunSummary[]> {
    this.assertOpen();
    const rows = [...this.runs.values()]
      .filter((record) => filter.status === undefined || record.status === filter.status)
      .sort((left, right) => right.createdAtMs - left.createdAtMs || right.runId.localeCompare(left.runId))
      .slice(0, filter.limit ?? 100);
    return rows.map((record) => {
      const {
        state: _state,
        messageCount: _count,
        journalEnd: _end,
        ...summary
      } = this.copyOut(record, false);
      return summary;
    });
  }

  async acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease> {
    this.assertOpen();
    const current = this.leases.get(runId);
    if (!this.runs.has(runId)) throw runNotFound(runId);
    if (current !== undefined && current.owner !== owner && current.expiresAtMs > nowMs) {
      throw leaseConflict(runId, { holder: current.owner, expiresAtMs: current.expiresAtMs }, nowMs);
    }
    const lease = { runId, owner, expiresAtMs: nowMs + ttlMs };
    this.leases.set(runId, lease);
    return { ...lease };
  }

  async releaseLease(runId: string, owner: string): Promise<void> {
    this.assertOpen();
    if (this.leases.get(runId)?.owner === owner) this.leases.delete(runId);
  }

  async recordToolStarted(entry: StartedToolCall): Promise<void> {
    this.assertOpen();
    this.startTool(entry);
  }

  private startTool(entry: StartedToolCall): void {
    let ledger = this.ledgers.get(entry.runId);
    if (ledger === undefined) {
      ledger = new Map();
      this.ledgers.set(entry.runId, ledger);
    }
    if (!ledger.has(entry.idempotencyKey)) ledger.set(entry.idempotencyKey, { ...entry, status: 'started' });
  }

  async recordToolCompleted(runId: string, idempotencyKey: string, result: JsonValue, completedAtMs: number) {
    this.assertOpen();
    this.completeTool(runId, idempotencyKey, result, completedAtMs);
  }

  private completeTool(
    runId: string,
    idempotencyKey: string,
    result: JsonValue,
    completedAtMs: number,
  ): void {
    const entry = this.ledgers.get(runId)?.get(idempotencyKey);
    if (entry === undefined) throw toolCallNotStarted(runId, idempotencyKey);
    if (entry.status === 'completed') return;
    entry.status = 'completed';
    entry.result = copy(result);
    entry.completedAtMs = completedAtMs;
  }

  async ledger(runId: string): Promise<LedgerEntry[]> {
    this.assertOpen();
    const entries = [...(this.ledgers.get(runId)?.values() ?? [])];
    return entries
      .sort((left, right) => left.step - right.step || left.callIndex - right.callIndex)
      .map((entry) => ({ ...entry, ...(entry.result === undefined ? {} : { result: copy(entry.result) }) }));
  }

  async requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus> {
    this.assertOpen();
    const record = this.runs.get(runId);
    if (record === undefined) throw runNotFound(runId);
    if (record.status === 'completed' || record.status === 'failed' || record.status === 'cancelled') {
      return record.status;
    }
    const lease = this.leases.get(runId);
    const live = record.status === 'running' && lease !== undefined && lease.expiresAtMs > nowMs;
    record.cancellation = { reason, requestedAtMs: nowMs };
    if (!live) record.status = 'cancelled';
    record.version += 1;
    record.updatedAtMs = nowMs;
    return record.status;
  }

  async loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    this.assertOpen();
    const session = this.sessions.get(sessionId);
    return session === undefined ? undefined : (JSON.parse(JSON.stringify(session)) as SessionRecord);
  }

  async appendSessionTurn(sessionId: string, append: SessionAppend): Promise<number> {
    this.assertOpen();
    const session = this.sessions.get(sessionId);
    if (session?.turns.some((turn) => turn.runId === append.runId)) {
      if (session.activeRunId === append.runId) delete session.activeRunId;
      return session.version;
    }
    const refused = sessionAppendConflict(
      sessionId,
      append,
      session && { version: session.version, activeRunId: session.activeRunId ?? null },
    );
    if (refused !== undefined || session === undefined) throw refused;
    const messages = append.messages.map(copy);
    session.turns.push({ runId: append.runId, messages, appendedAtMs: append.nowMs });
    session.version += 1;
    session.messageCount += messages.length;
    session.updatedAtMs = append.nowMs;
    delete session.activeRunId;
    return session.version;
  }

  async releaseSession(sessionId: string, runId: string, nowMs: number): Promise<void> {
    this.assertOpen();
    const session = this.sessions.get(sessionId);
    if (session?.activeRunId !== runId) return;
    delete session.activeRunId;
    session.updatedAtMs = nowMs;
  }

  async listSessions(filter: { limit?: number } = {}): Promise<SessionSummary[]> {
    this.assertOpen();
    return [...this.sessions.values()]
      .sort(
        (left, right) =>
          right.updatedAtMs - left.updatedAtMs || right.sessionId.localeCompare(left.sessionId),
      )
      .slice(0, filter.limit ?? 100)
      .map(({ turns: _turns, ...summary }) => ({ ...summary }));
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    this.assertOpen();
    return this.sessions.delete(sessionId);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new KeelError('store.unavailable', 'The memory run store is closed');
  }

  /**
   * A copy of the record, with its messages put back from the log and its lease as it stands; with `withState` false
   * (for a summary), its state is null.
   */
  private copyOut(record: RunRecord, withState = true): RunRecord {
    const text = withState ? this.stateTexts.get(record.runId) : undefined;
    const state = !withState
      ? null
      : text === undefined
        ? copy(record.state)
        : (JSON.parse(text) as JsonValue);
    const copied: RunRecord = { ...record, state };
    const log = this.logs.get(record.runId);
    if (record.messageCount !== undefined && log !== undefined && state !== null) {
      (copied.state as Record<string, JsonValue>).messages = log.map((text) => JSON.parse(text) as JsonValue);
    }
    const journal = this.journals.get(record.runId);
    if (record.journalEnd !== undefined && journal !== undefined && state !== null) {
      const positions = [...journal.keys()].filter((position) => position < record.journalEnd!);
      const entries = positions.sort((left, right) => left - right).map((position) => journal.get(position)!);
      const held = (copied.state as { journal?: Record<string, JsonValue> }).journal;
      if (held !== undefined) held.entries = entries.map((text) => JSON.parse(text) as JsonValue);
    }
    if (record.cancellation !== undefined) copied.cancellation = { ...record.cancellation };
    const lease = this.leases.get(record.runId);
    if (lease !== undefined) copied.lease = { owner: lease.owner, expiresAtMs: lease.expiresAtMs };
    return copied;
  }
}

function copy(value: JsonValue): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}
