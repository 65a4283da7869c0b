import type { JsonValue } from '../errors/keel-error.js';

/**
 * Where a run is in its life: `queued` (submitted to a fleet of workers: stored with its input, nothing has run yet;
 * a worker starts it with `resume`), `running` (in progress, or paused at its last checkpoint because its process
 * died, its store failed or its worker shut down: it awaits a resume), `interrupted` (it waits for a decision:
 * approvals, or calls that may have run), or one of the ends: `completed`, `failed`, `cancelled`.
 */
export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'interrupted' | 'cancelled';

/** A run as stored. `state` is the run loop's serialised state, tagged with `schemaVersion` for migrations. */
export interface RunRecord {
  runId: string;
  agentName: string;
  status: RunStatus;
  /** Increases by one with every checkpoint; used for optimistic concurrency. */
  version: number;
  schemaVersion: number;
  state: JsonValue;
  /** When the run was created, on the clock of the agent that created it (ms since the epoch). */
  createdAtMs: number;
  /** When the record last changed, on the clock of the agent (or caller) that changed it (ms since the epoch). */
  updatedAtMs: number;
  /**
   * For a store with a message log ({@link RunStore.messageLog}): the messages of the run's conversation the log
   * holds, where the next {@link MessageLogWrite} may start at most. Absent when the stored state holds its messages
   * inline (a run written by `createRun`, by a checkpoint without `messages`, or by a keel before the log): the log is
   * then empty and the next log write starts at 0. Either way `state.messages` is the whole conversation.
   */
  messageCount?: number;
  /**
   * For a store with a journal log ({@link RunStore.journalLog}): the position after the last entry of the run's
   * event journal the log holds (positions count the entries the journal dropped from its front), where the next
   * {@link JournalLogWrite} appends. Absent when the stored state holds its journal inline. Either way
   * `state.journal.entries` is the journal's entries.
   */
  journalEnd?: number;
  /**
   * Set by {@link RunStore.requestCancellation}: another process asked for the run to be cancelled. The run's owner
   * finds it at its next checkpoint (which fails with `store.conflict`, the version having moved) and ends the run
   * as `cancelled`; a resume finds it before anything runs.
   */
  cancellation?: CancellationRequest;
  /**
   * Who holds the run's lease now and until when, expired or not; absent when nobody does. In a fleet the owner names
   * the worker process that runs it.
   */
  lease?: Omit<Lease, 'runId'>;
}

/** A request, recorded in the store, to cancel a run. */
export interface CancellationRequest {
  reason: string;
  requestedAtMs: number;
}

/** A summary row for listings. */
export type RunSummary = Omit<RunRecord, 'state' | 'messageCount' | 'journalEnd'>;

/**
 * A new run, as handed to {@link RunStore.createRun}. With `lease`, it is created leased to that owner. With
 * `session`, the run is a turn of that session: it is created only if it can hold the session (see
 * {@link SessionClaim}).
 */
export type NewRun = Omit<
  RunRecord,
  'version' | 'updatedAtMs' | 'cancellation' | 'messageCount' | 'journalEnd'
> & {
  session?: SessionClaim;
  /**
   * For a store with a message log ({@link RunStore.messageLog}) only: the run's first messages, written to its log
   * (`start` 0; a larger one is refused with `store.invalid`). `state` is then the state without its conversation,
   * its `messages` field their count, as in a {@link CheckpointWrite}, and the run's first checkpoint writes only
   * the messages added since. Defaults to none: `state` holds its messages inline.
   */
  messages?: MessageLogWrite;
};

/**
 * A run's claim on a session, made atomically with the run's creation. The claim succeeds when the session is at
 * `expectedVersion` (0: a session not stored yet, which is then created) and free: no run holds it, or the run that
 * holds it has ended `failed` or `cancelled` (nothing of it is to be appended) or is not in the store. The new run then
 * holds the session until its turns are appended ({@link RunStore.appendSessionTurn}) or it lets go
 * ({@link RunStore.releaseSession}). A run that holds a session while `running`, `interrupted` or `completed` (its
 * turns not yet appended) keeps every other run out: `store.conflict`, see {@link SessionConflictData}.
 */
export interface SessionClaim {
  sessionId: string;
  /** The session's version the run's conversation was loaded at: the number of turns it had. */
  expectedVersion: number;
}

/**
 * What a `store.conflict` from a refused session claim carries in `data`: always `sessionId`; for a session that
 * moved on since it was loaded, `expectedVersion` and `actualVersion`; for a session held by another run,
 * `activeRunId`, `activeRunStatus` and, while that run holds a lease, `activeRunLeaseExpiresAtMs`.
 */
export interface SessionConflictData {
  sessionId: string;
  expectedVersion?: number;
  actualVersion?: number;
  activeRunId?: string;
  activeRunStatus?: RunStatus;
  activeRunLeaseExpiresAtMs?: number;
}

/** The turns one completed run added to a session: its input and everything the run added to the conversation. */
export interface SessionTurn {
  runId: string;
  /** The turn's messages (keel `Message`s, as plain JSON), in order. */
  messages: JsonValue[];
  /** When the turn was appended, on the appending agent's clock (ms since the epoch). */
  appendedAtMs: number;
}

/** A session as stored: a conversation kept across runs, one turn per completed run, oldest first. */
export interface SessionRecord {
  sessionId: string;
  /** The agent whose run created the session. */
  agentName: string;
  /** The number of turns appended so far; a run's turns are appended only at the version its conversation began at. */
  version: number;
  /** Messages over every turn. */
  messageCount: number;
  /** The run that holds the session now (see {@link SessionClaim}), if any. */
  activeRunId?: string;
  createdAtMs: number;
  /** When a turn was last appended or a run last claimed or let go of the session (ms since the epoch). */
  updatedAtMs: number;
  turns: SessionTurn[];
}

/** A summary row of a session, for listings. */
export type SessionSummary = Omit<SessionRecord, 'turns'>;

/** A completed run's turns, as handed to {@link RunStore.appendSessionTurn}. */
export interface SessionAppend {
  /** The run appending: it must hold the session. */
  runId: string;
  /** The version its conversation began at; the append makes the session `expectedVersion + 1`. */
  expectedVersion: number;
  messages: JsonValue[];
  /** Now, on the writer's clock (ms since the epoch). */
  nowMs: number;
}

/**
 * What a checkpoint writes to the run's message log (see {@link RunStore.messageLog}): the messages from `start` on.
 * The log keeps its first `start` messages, drops any it holds from `start` on, and appends `messages`: it then holds
 * `start + messages.length`. A run that only adds messages writes those added since its last checkpoint (`start` is
 * the stored count); a run whose conversation was rewritten (a context reduction, a conversation manager that drops
 * or summarises old messages) writes from the first message that changed (0 when the first one did). `start` is at
 * most the stored count ({@link RunRecord.messageCount}, 0 for a run whose messages are inline); a larger one is
 * refused with `store.invalid` and writes nothing.
 */
export interface MessageLogWrite {
  /** The index in the conversation of `messages[0]`. */
  start: number;
  /** The messages from `start` on, in order (keel `Message`s as plain JSON). */
  messages: JsonValue[];
  /**
   * `messages` already serialised, one JSON text each (`JSON.stringify` of each): a store may write them as they are.
   * Defaults to none.
   */
  texts?: readonly string[];
}

/**
 * What a checkpoint writes to the run's event journal log (see {@link RunStore.journalLog}). A run's journal (the
 * state's `journal`: `entries`, and `dropped`, the entries dropped from its front past its limit) only grows at its
 * end and drops at its front, so each entry has a fixed position: `dropped` plus its index in `entries`. The log keeps
 * the entries at positions from `dropped` to `start` (those below `dropped` are deleted, as are any from `start` on)
 * and appends `entries` at `start`: it then holds positions `dropped` to `start + entries.length`. `start` is at least
 * `dropped`; it may lie past the log's end when entries were added and dropped between two writes (the positions
 * between were dropped, so nothing is missing).
 */
export interface JournalLogWrite {
  /** The position of `entries[0]` in the run's journal (at least `dropped`). */
  start: number;
  /** The journal's entries from `start` on, in order (keel `JournalEntry`s as plain JSON). */
  entries: JsonValue[];
  /** `entries` already serialised, one JSON text each: a store may write them as they are. Defaults to none. */
  texts?: readonly string[];
  /** The entries dropped from the journal's front (the state's `journal.dropped`): the log keeps none below it. */
  dropped: number;
}

/** One checkpoint, as handed to {@link RunStore.saveCheckpoint}. */
export interface CheckpointWrite {
  /** The version the stored record must be at; the checkpoint makes it `expectedVersion + 1`. */
  expectedVersion: number;
  /** Who writes: must hold the run's lease. */
  owner: string;
  status: RunStatus;
  schemaVersion: number;
  /**
   * The run's state. With `messages`, the state without its conversation: its `messages` field is the conversation's
   * length (a number), and the store keeps the messages in its log; `loadRun` puts them back.
   */
  state: JsonValue;
  /**
   * The conversation's messages added or changed since the last checkpoint, for a store with a message log
   * ({@link RunStore.messageLog}). Defaults to none: `state` holds its messages inline, and the store's log of the run
   * (if any) is dropped.
   */
  messages?: MessageLogWrite;
  /**
   * The run's journal entries added since the last checkpoint, for a store with a journal log
   * ({@link RunStore.journalLog}). With it, the state's `journal.entries` is the number of entries the journal holds
   * (positions `dropped` to `start + entries.length`), and the store keeps them in its log; `loadRun` puts them back.
   * Defaults to none: the state holds its journal inline (if it has one), and the store's journal log of the run (if
   * any) is dropped.
   */
  journal?: JournalLogWrite;
  /** Now, on the writer's clock (ms since the epoch): becomes the record's `updatedAtMs`. */
  nowMs: number;
}

/** A time-limited claim on a run: only its owner may write checkpoints. */
export interface Lease {
  runId: string;
  owner: string;
  expiresAtMs: number;
}

/** A tool call in the ledger. `started` without `completed` means it may or may not have run. */
export interface LedgerEntry {
  runId: string;
  idempotencyKey: string;
  step: number;
  callIndex: number;
  toolName: string;
  status: 'started' | 'completed';
  /** The call's result (a serialised ToolResult, with the tool's stop directive if it gave one) once completed. */
  result?: JsonValue;
  startedAtMs: number;
  completedAtMs?: number;
}

/** A call recorded as started, as handed to {@link RunStore.recordToolStarted}. */
export type StartedToolCall = Omit<LedgerEntry, 'status' | 'result' | 'completedAtMs'>;

/** A started call's completion, as part of a {@link StepCommit}. */
export interface CompletedToolCall {
  idempotencyKey: string;
  /** As for {@link RunStore.recordToolCompleted}. */
  result: JsonValue;
  completedAtMs: number;
}

/**
 * A call that started and completed since the last write (an idempotent call, whose start waits for its end): its
 * ledger entry is written completed at once, start and result together (see {@link StepCommit.toolsRan}).
 */
export type RanToolCall = StartedToolCall & CompletedToolCall;

/**
 * The writes of one step, as handed to {@link RunStore.commitStep}: ledger entries, a checkpoint and the lease,
 * applied together or not at all.
 */
export interface StepCommit {
  checkpoint: CheckpointWrite;
  /**
   * `checkpoint.state` already serialised (`JSON.stringify` of the same value): a store may write it as it is rather
   * than serialise the state again. Defaults to none.
   */
  stateText?: string;
  /** Calls to record as started (a key already in the ledger keeps its entry). Defaults to none. */
  toolsStarted?: StartedToolCall[];
  /**
   * Calls started by an earlier write to record as completed (a completed one keeps its first result). Defaults to
   * none.
   */
  toolsCompleted?: CompletedToolCall[];
  /**
   * Calls that started and completed since the last write, for a store that sets {@link RunStore.ranCallsInCommit}:
   * each is recorded completed, with its start and result, in the same transaction (a call the ledger holds as
   * started is completed; a completed one keeps its first result). Defaults to none.
   */
  toolsRan?: RanToolCall[];
  /** Renews the writer's lease until `checkpoint.nowMs + leaseTtlMs`. Defaults to leaving the lease as it is. */
  leaseTtlMs?: number;
  /** Frees the lease once the checkpoint is written (the run's end). Defaults to false. */
  releaseLease?: boolean;
  /**
   * Creates the run in the same transaction, for a store that sets {@link RunStore.createsInCommit}: the checkpoint
   * (with `expectedVersion` 0) is then the new run's first state, stored at version 1 and leased to
   * `checkpoint.owner` (until `checkpoint.nowMs + leaseTtlMs`, or free with `releaseLease`). When a run with this id
   * exists, nothing is written and it throws `store.conflict`. Defaults to none: the run exists already.
   */
  create?: StepCreate;
}

/** The run a {@link StepCommit} creates: what its record holds beside the checkpoint. */
export interface StepCreate {
  agentName: string;
  /** When the run was created, on the clock of the agent that created it (ms since the epoch). */
  createdAtMs: number;
}

/**
 * Durable storage for runs. Every implementation passes the contract suite in `@keel/core/testing`.
 *
 * Failures are thrown as KeelErrors: `store.conflict` for a lost race (a version or lease mismatch, a duplicate
 * run id), `store.unavailable` when the backend cannot be reached (worth retrying), `store.invalid` when the backend
 * refused the operation itself (a bad query or value: retrying cannot help), `store.not_found` for an unknown run.
 */
export interface RunStore {
  /**
   * Set (true) by a store that keeps each run's conversation as a log, a row per message (see
   * {@link MessageLogWrite}): keel's durable runs then write, at each checkpoint, the small state and the messages
   * added since the last one, so that a step costs the same at step 10 and step 1,000. A store without it is handed
   * the whole state, messages inline, at every checkpoint. Defaults to false.
   */
  readonly messageLog?: boolean;
  /**
   * Set (true) by a store that keeps each run's event journal (the state's `journal`) as a log, a row per entry (see
   * {@link JournalLogWrite}): keel's durable runs then write, at each checkpoint, only the entries added since the
   * last one. A store without it is handed the journal inline in the state. Defaults to false.
   */
  readonly journalLog?: boolean;
  /**
   * Stores a new run at version 1 (`updatedAtMs` = `createdAtMs`), leased to `run.lease.owner` until
   * `run.lease.expiresAtMs` when `run.lease` is given (in the same write: a new run needs no `acquireLease`);
   * `store.conflict` when its id is taken. With `run.messages`, the run's log holds them in the same write (its
   * record's `messageCount` is their number). With `run.session`, claims the session in the same transaction (see
   * {@link SessionClaim}): when the claim is refused nothing is stored, and the `store.conflict` says why in `data`
   * ({@link SessionConflictData}).
   */
  createRun(run: NewRun): Promise<RunRecord>;
  /**
   * The run with this id (a copy: changing it changes nothing stored), or undefined when there is none. A state whose
   * messages are in the store's log comes back whole: `state.messages` is the conversation, and `messageCount` says
   * how many of them the log holds. Likewise a journal in the store's journal log comes back whole
   * (`state.journal.entries`), with `journalEnd`.
   */
  loadRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Writes a checkpoint if the stored version is `expectedVersion` and `owner` holds the lease (expired or not, as
   * long as nobody took it since), with its `messages` in the run's log in the same transaction; returns the new
   * version. Otherwise throws `store.conflict` (`store.not_found` for
   * an unknown run).
   */
  saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number>;
  /**
   * Optional: one step's writes in one transaction, in one round trip where the backend allows it. Records
   * `toolsStarted`, `toolsCompleted` (and `toolsRan`, see {@link ranCallsInCommit}) in the ledger, writes the
   * checkpoint as {@link saveCheckpoint} does, renews (`leaseTtlMs`) or frees (`releaseLease`) the writer's lease, and
   * returns the new version. When the checkpoint is
   * refused, or a completion names a call the ledger does not hold, nothing at all is written and it throws what
   * `saveCheckpoint` would (`store.conflict`, `store.not_found`). A store without it gets the separate calls.
   */
  commitStep?(runId: string, commit: StepCommit): Promise<number>;
  /**
   * Set (true) by a store whose {@link commitStep} takes `create` ({@link StepCommit.create}): keel's durable runs
   * then create a child run (one an agent tool or a handoff starts) with its first checkpoint, one transaction
   * instead of two. A store without it has child runs created by {@link createRun} first. Defaults to false.
   */
  readonly createsInCommit?: boolean;
  /**
   * Set (true) by a store whose {@link commitStep} takes `toolsRan` ({@link StepCommit.toolsRan}): keel's durable
   * runs then write an idempotent tool call's start and end with the next write (running it again after a crash is
   * harmless), so a step of idempotent calls costs one write instead of two or more (a call still running after
   * 100 ms has what waits written while it runs). A store without it has every call's start written before the call
   * runs. Defaults to false.
   */
  readonly ranCallsInCommit?: boolean;
  /**
   * Summaries of runs (no state), newest `createdAtMs` first, only those with `status` when given; at most `limit`
   * of them (defaults to 100).
   */
  listRuns(filter?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]>;
  /**
   * Takes the lease until `nowMs + ttlMs` if it is free, expired at `nowMs` or already `owner`'s (a renewal);
   * otherwise throws `store.conflict` (`retryAfterMs`: until the holder's lease expires). `store.not_found` for an
   * unknown run.
   */
  acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease>;
  /** Frees the lease if `owner` holds it; does nothing otherwise. */
  releaseLease(runId: string, owner: string): Promise<void>;
  /** Records a call as started; a second start of the same key keeps the first entry. */
  recordToolStarted(entry: StartedToolCall): Promise<void>;
  /**
   * Records a started call as completed with its result; a second completion keeps the first. `store.not_found`
   * when the call was never recorded as started.
   */
  recordToolCompleted(
    runId: string,
    idempotencyKey: string,
    result: JsonValue,
    completedAtMs: number,
  ): Promise<void>;
  /** The run's ledger, by step then call index (empty for an unknown run). */
  ledger(runId: string): Promise<LedgerEntry[]>;
  /**
   * Asks for a run to be cancelled, from any process. A run that is not running (`queued`, `interrupted`, or `running`
   * with no live lease at `nowMs`: its process died) becomes `cancelled` at once. A running run keeps its status: the
   * request is recorded (`RunRecord.cancellation`) and the version is bumped, so that the owner's next checkpoint
   * fails with `store.conflict` and the owner, reloading the run, ends it as `cancelled`. A run that has already
   * ended is left as it is. `updatedAtMs` becomes `nowMs`. Resolves with the run's stored status afterwards;
   * `store.not_found` for an unknown run.
   */
  requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus>;
  /** The session with this id and all its turns (a copy), or undefined when there is none. */
  loadSession(sessionId: string): Promise<SessionRecord | undefined>;
  /**
   * Appends a completed run's turns to the session it holds, in one transaction: the session's version becomes
   * `expectedVersion + 1`, its message count grows, and the run lets go of it. Appending a run's turns a second time
   * changes nothing and resolves with the session's version (an append whose answer was lost can be made again).
   * `store.conflict` when the run does not hold the session or the version moved; `store.not_found` for an unknown
   * session.
   */
  appendSessionTurn(sessionId: string, append: SessionAppend): Promise<number>;
  /** Lets go of the session if `runId` holds it (the run ended with nothing to append); does nothing otherwise. */
  releaseSession(sessionId: string, runId: string, nowMs: number): Promise<void>;
  /** Summaries of sessions (no turns), most recently updated first; at most `limit` of them (defaults to 100). */
  listSessions(filter?: { limit?: number }): Promise<SessionSummary[]>;
  /**
   * Deletes a session and its turns (the runs stay); resolves with whether it existed. A run that holds it can no
   * longer append its turns (`store.not_found`).
   */
  deleteSession(sessionId: string): Promise<boolean>;
  /** Releases the store's resources (connections, file handles); later calls fail with `store.unavailable`. */
  close(): Promise<void>;
}
