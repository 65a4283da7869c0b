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

/**
 * A RunStore wrapper for tests that fails on command, as a crashed process or a store outage would: after
 * `writeLimit` writes every later write fails, and while `down` is set every call fails, with `store.unavailable`;
 * while `hung` is set every call returns a promise that never settles (a server that stopped answering). Nothing
 * that fails or hangs reaches the wrapped store.
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
  /** While true every call hangs: its promise never settles. Defaults to false. */
  hung = false;
  /** Writes that reached the wrapped store. */
  writes = 0;
  /** The operations refused, in order. */
  readonly refused: string[] = [];

  /** The wrapped store's `commitStep` (one write), when it has one. */
  readonly commitStep?: (runId: string, commit: StepCommit) => Promise<number>;
  /** Whether the wrapped store keeps a message log (see `RunStore.messageLog`). */
  readonly messageLog: boolean;
  /** Whether the wrapped store's `commitStep` creates runs (see `RunStore.createsInCommit`). */
  readonly createsInCommit: boolean;
  /** Whether the wrapped store's `commitStep` takes calls that ran (see `RunStore.ranCallsInCommit`). */
  readonly ranCallsInCommit: boolean;

  constructor(readonly inner: RunStore) {
    this.messageLog = inner.messageLog === true;
    this.createsInCommit = inner.createsInCommit === true && inner.commitStep !== undefined;
    this.ranCallsInCommit = inner.ranCallsInCommit === true && inner.commitStep !== undefined;
    const commitStep = inner.commitStep?.bind(inner);
    if (commitStep !== undefined) {
      this.commitStep = (runId, commit) => this.through('commitStep', true, () => commitStep(runId, commit));
    }
  }

  /** Passes `operation` to the wrapped store unless the store is down, hung or out of writes. */
  private through<T>(operation: string, write: boolean, call: () => Promise<T>): Promise<T> {
    if (this.hung) {
      this.refused.push(operation);
      return new Promise<T>(() => undefined);
    }
    if (this.down || (write && this.writes >= this.writeLimit)) {
      this.refused.push(operation);
      return Promise.reject(
        new KeelError('store.unavailable', `${operation}: the run store is unavailable (simulated)`),
      );
    }
    if (write) this.writes++;
    try {
      return call();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  createRun(run: NewRun): Promise<RunRecord> {
    return this.through('createRun', true, () => this.inner.createRun(run));
  }

  loadRun(runId: string): Promise<RunRecord | undefined> {
    return this.through('loadRun', false, () => this.inner.loadRun(runId));
  }

  saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    return this.through('saveCheckpoint', true, () => this.inner.saveCheckpoint(runId, checkpoint));
  }

  listRuns(filter?: { status?: RunStatus; limit?: number }): Promise<RunSummary[]> {
    return this.through('listRuns', false, () => this.inner.listRuns(filter));
  }

  acquireLease(runId: string, owner: string, ttlMs: number, nowMs: number): Promise<Lease> {
    return this.through('acquireLease', true, () => this.inner.acquireLease(runId, owner, ttlMs, nowMs));
  }

  releaseLease(runId: string, owner: string): Promise<void> {
    return this.through('releaseLease', true, () => this.inner.releaseLease(runId, owner));
  }

  recordToolStarted(entry: StartedToolCall): Promise<void> {
    return this.through('recordToolStarted', true, () => this.inner.recordToolStarted(entry));
  }

  recordToolCompleted(
    runId: string,
    idempotencyKey: string,
    result: JsonValue,
    completedAtMs: number,
  ): Promise<void> {
    return this.through('recordToolCompleted', true, () =>
      this.inner.recordToolCompleted(runId, idempotencyKey, result, completedAtMs),
    );
  }

  ledger(runId: string): Promise<LedgerEntry[]> {
    return this.through('ledger', false, () => this.inner.ledger(runId));
  }

  requestCancellation(runId: string, reason: string, nowMs: number): Promise<RunStatus> {
    return this.through('requestCancellation', true, () =>
      this.inner.requestCancellation(runId, reason, nowMs),
    );
  }

  loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.through('loadSession', false, () => this.inner.loadSession(sessionId));
  }

  appendSessionTurn(sessionId: string, append: SessionAppend): Promise<number> {
    return this.through('appendSessionTurn', true, () => this.inner.appendSessionTurn(sessionId, append));
  }

  releaseSession(sessionId: string, runId: string, nowMs: number): Promise<void> {
    return this.through('releaseSession', true, () => this.inner.releaseSession(sessionId, runId, nowMs));
  }

  listSessions(filter?: { limit?: number }): Promise<SessionSummary[]> {
    return this.through('listSessions', false, () => this.inner.listSessions(filter));
  }

  deleteSession(sessionId: string): Promise<boolean> {
    return this.through('deleteSession', true, () => this.inner.deleteSession(sessionId));
  }

  /** Closes the wrapped store. */
  async close(): Promise<void> {
    return this.inner.close();
  }
}
