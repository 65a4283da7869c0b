import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { Lease, LedgerEntry, RunRecord, RunStatus, RunStore, RunSummary } from '../spec/run-store.js';

/**
 * A RunStore wrapper for tests that fails on command, as a crashed process or a store outage would: after
 * `writeLimit` writes every later write fails, and while `down` is set every call fails, with `store.unavailable`.
 * Nothing that fails reaches the wrapped store.
 *
 * @example
 *   const store = new FaultyRunStore(new MemoryRunStore());
 *   store.writeLimit = 5; // the sixth write and every later one fail: a crash right after the fifth
 */
export class FaultyRunStore implements RunStore {
  /** Writes allowed before every later write fails. Defaults to no limit. */
  writeLimit = Number.POSITIVE_INFINITY;
  /** While true every call fails. Defaults to false. */
  down = false;
  /** Writes that reached the wrapped store. */
  writes = 0;
  /** The operations refused, in order. */
  readonly refused: string[] = [];

  constructor(readonly inner: RunStore) {}

  private gate(operation: string, write: boolean): void {
    if (this.down || (write && this.writes >= this.writeLimit)) {
      this.refused.push(operation);
      throw new KeelError('store.unavailable', `${operation}: the run store is unavailable (simulated)`);
    }
    if (write) this.writes++;
  }

  async createRun(run: Omit<RunRecord, 'version' | 'updatedAtMs' | 'cancellation'>): Promise<RunRecord> {
    this.gate('createRun', true);
    return this.inner.createRun(run);
  }

  async loadRun(runId: string): Promise<RunRecord | undefined> {
    this.gate('loadRun', false);
    return this.inner.loadRun(runId);
  }

  async saveCheckpoint(
    runId: string,
    checkpoint: {
      expectedVersion: number;
      owner: string;
      status: RunStatus;
      schemaVersion: number;
      state: JsonValue;
    },
  ): Promise<number> {
    this.gate('saveCheckpoint', true);
    return this.inner.saveCheckpoint(runId, checkpoint);
  }

  async listRuns(filter?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]> {
    this.gate('listRuns', false);
    return this.inner.listRuns(filter);
  }

  async acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease> {
    this.gate('acquireLease', true);
    return this.inner.acquireLease(runId, owner, ttlMs, nowMs);
  }

  async releaseLease(runId: string, owner: string): Promise<void> {
    this.gate('releaseLease', true);
    return this.inner.releaseLease(runId, owner);
  }

  async recordToolStarted(entry: Omit<LedgerEntry, 'status' | 'result' | 'completedAtMs'>): Promise<void> {
    this.gate('recordToolStarted', true);
    return this.inner.recordToolStarted(entry);
  }

  async recordToolCompleted(runId: string, idempotencyKey: string, result: JsonValue, completedAtMs: number) {
    this.gate('recordToolCompleted', true);
    return this.inner.recordToolCompleted(runId, idempotencyKey, result, completedAtMs);
  }

  async ledger(runId: string): Promise<LedgerEntry[]> {
    this.gate('ledger', false);
    return this.inner.ledger(runId);
  }

  async requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus> {
    this.gate('requestCancellation', true);
    return this.inner.requestCancellation(runId, reason, nowMs);
  }

  /** Closes the wrapped store. */
  async close(): Promise<void> {
    return this.inner.close();
  }
}
