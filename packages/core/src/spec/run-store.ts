import type { JsonValue } from '../errors/keel-error.js';

/** Where a run is in its life. `paused` means the store failed mid-run; `interrupted` awaits a decision. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted' | 'cancelled' | 'paused';

/** A run as stored. `state` is the run loop's serialised state, tagged with `schemaVersion` for migrations. */
export interface RunRecord {
  runId: string;
  agentName: string;
  status: RunStatus;
  /** Increases by one with every checkpoint; used for optimistic concurrency. */
  version: number;
  schemaVersion: number;
  state: JsonValue;
  createdAtMs: number;
  updatedAtMs: number;
  /**
   * Set by {@link RunStore.requestCancellation}: another process asked for the run to be cancelled. The run's owner
   * finds it at its next checkpoint (which fails with `store.conflict`, the version having moved) and ends the run
   * as `cancelled`; a resume finds it before anything runs.
   */
  cancellation?: CancellationRequest;
}

/** A request, recorded in the store, to cancel a run. */
export interface CancellationRequest {
  reason: string;
  requestedAtMs: number;
}

/** A summary row for listings. */
export type RunSummary = Omit<RunRecord, 'state'>;

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
  /** The call's result (a serialised ToolResult) once completed. */
  result?: JsonValue;
  startedAtMs: number;
  completedAtMs?: number;
}

/**
 * Durable storage for runs. Every implementation passes the contract suite in `@keel/core/testing`.
 *
 * Failures are thrown as KeelErrors: `store.conflict` for a lost race (a version or lease mismatch, a duplicate
 * run id), `store.unavailable` when the backend cannot be reached, `store.not_found` for an unknown run.
 */
export interface RunStore {
  createRun(run: Omit<RunRecord, 'version' | 'updatedAtMs' | 'cancellation'>): Promise<RunRecord>;
  loadRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Writes a checkpoint if the stored version is `expectedVersion` and `owner` holds the lease; returns the new
   * version. Otherwise throws `store.conflict`.
   */
  saveCheckpoint(
    runId: string,
    checkpoint: {
      expectedVersion: number;
      owner: string;
      status: RunStatus;
      schemaVersion: number;
      state: JsonValue;
    },
  ): Promise<number>;
  listRuns(filter?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]>;
  /** Takes the lease if it is free, expired or already `owner`'s; otherwise throws `store.conflict`. */
  acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease>;
  releaseLease(runId: string, owner: string): Promise<void>;
  /** Records a call as started; a second start of the same key keeps the first entry. */
  recordToolStarted(entry: Omit<LedgerEntry, 'status' | 'result' | 'completedAtMs'>): Promise<void>;
  recordToolCompleted(
    runId: string,
    idempotencyKey: string,
    result: JsonValue,
    completedAtMs: number,
  ): Promise<void>;
  ledger(runId: string): Promise<LedgerEntry[]>;
  /**
   * Asks for a run to be cancelled, from any process. A run that is not running (`interrupted`, `paused`, or
   * `running` with no live lease at `nowMs`: its process died) becomes `cancelled` at once. A running run keeps its
   * status: the request is recorded (`RunRecord.cancellation`) and the version is bumped, so that the owner's next
   * checkpoint fails with `store.conflict` and the owner, reloading the run, ends it as `cancelled`. A run that has
   * already ended is left as it is. Resolves with the run's stored status afterwards; `store.not_found` for an
   * unknown run.
   */
  requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus>;
  close(): Promise<void>;
}
