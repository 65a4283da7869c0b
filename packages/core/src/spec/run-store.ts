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
  createRun(run: Omit<RunRecord, 'version' | 'updatedAtMs'>): Promise<RunRecord>;
  loadRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * Writes a checkpoint if the stored version is `expectedVersion` and `owner` holds the lease; returns the new
   * version. Otherwise throws `store.conflict`.
   */
  saveCheckpoint(
    runId: string,
    checkpoint: { expectedVersion: number; owner: string; status: RunStatus; schemaVersion: number; state: JsonValue },
  ): Promise<number>;
  listRuns(filter?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]>;
  /** Takes the lease if it is free, expired or already `owner`'s; otherwise throws `store.conflict`. */
  acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease>;
  releaseLease(runId: string, owner: string): Promise<void>;
  /** Records a call as started; a second start of the same key keeps the first entry. */
  recordToolStarted(entry: Omit<LedgerEntry, 'status' | 'result' | 'completedAtMs'>): Promise<void>;
  recordToolCompleted(runId: string, idempotencyKey: string, result: JsonValue, completedAtMs: number): Promise<void>;
  ledger(runId: string): Promise<LedgerEntry[]>;
  close(): Promise<void>;
}
