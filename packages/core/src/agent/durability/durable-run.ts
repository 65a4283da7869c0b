import { messageOf } from '../../errors/error-chain.js';
import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { Clock } from '../../policies/clock.js';
import type { CheckpointWrite, RunStatus } from '../../spec/run-store.js';
import type { DurableHalt, DurableLink } from '../agent-runtime.js';
import { countRetry } from '../loop/report.js';
import type { RunContext } from '../loop/run-context.js';
import type { DurabilitySettings } from './durability.js';
import { journal } from './event-journal.js';
import { LeaseHeartbeat } from './lease-heartbeat.js';
import { ledgerResultOf } from './ledger-result.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState, type RunTransition } from './run-state.js';
import { storeCallsOf, withStoreRetries, withStoreTimeout } from './store-calls.js';

/**
 * Journals a run's ends and resumptions, with the moment its pause began (its last checkpoint before it stopped:
 * an interrupted run's end, or the last save of a process that died), which the resume is about to overwrite.
 */
function journalPause(transition: RunTransition, state: RunState, nowMs: number): void {
  if (transition.kind === 'run-resumed') {
    journal(state, {
      type: 'run-resumed',
      atMs: nowMs,
      step: state.step,
      ...(state.checkpointedAtMs === undefined ? {} : { pausedSinceMs: state.checkpointedAtMs }),
    });
  } else if (transition.kind === 'run-ended') {
    journal(state, {
      type: 'run-ended',
      atMs: state.endedAtMs ?? nowMs,
      step: state.step,
      status: transition.status,
      ...(state.stopReason === undefined ? {} : { code: state.stopReason }),
    });
  }
}

/**
 * Saves one run to its store: a checkpoint after every transition (awaited, in order, one at a time), the tool
 * ledger (a call is recorded as started before it runs, and as completed, with its result, before the state says
 * so), and the run's lease (renewed at checkpoints and by a heartbeat while a long call runs, released at the end).
 * Every store operation is bounded by `storeTimeoutMs`.
 *
 * A write that fails with `store.unavailable` is retried (`storeMaxAttempts`); when it still fails, or the lease is
 * lost to another process, the run halts: its signal aborts and it ends `interrupted`, the store keeping the last
 * good checkpoint. A checkpoint refused because another process asked for cancellation (the version moved) ends the
 * run as `cancelled`, unless the run had already reached its end: that end is saved.
 *
 * Once the run's end is saved (or the run closed), nothing more is written: work of a cancelled run that goes on in
 * the background (a slow validator or approval check) can never bring the stored run back to life.
 */
export class DurableRun implements DurableLink {
  /** The stored record's version, which the next checkpoint expects. */
  version: number;
  /** Set once the run can no longer be saved. */
  halted: DurableHalt | undefined;
  private run: RunContext | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly heartbeat: LeaseHeartbeat;
  /** Set when the run's end was handed over for saving: later checkpoints are refused. */
  private ended = false;
  /** Set once the lease is being released: it is never taken again. */
  private released = false;
  /** Calls recorded as started in the ledger: only those get a completion there. */
  private readonly startedKeys: Set<string>;

  constructor(
    private readonly settings: DurabilitySettings,
    readonly runId: string,
    version: number,
    private readonly clock: Clock,
    leaseTakenAtMs: number,
    startedKeys: Iterable<string> = [],
  ) {
    this.version = version;
    this.startedKeys = new Set(startedKeys);
    this.heartbeat = new LeaseHeartbeat(settings, runId, clock, leaseTakenAtMs, (error) => this.stop(error));
  }

  /** Binds the run being saved and starts the lease heartbeat. */
  attach(run: RunContext): void {
    this.run = run;
    this.heartbeat.start();
  }

  /**
   * The checkpoint of one transition: the agent's checkpoint hook first, then the ledger entry and the state, in
   * the store. The state is serialised at once, so later changes cannot leak into this checkpoint. Refused (with the
   * run's abort reason) once the run's end was saved.
   */
  save(transition: RunTransition): Promise<void> {
    const run = this.run!;
    if (this.ended) return Promise.reject(run.abort.aborted ? run.abort.signal.reason : this.endedError());
    if (transition.kind === 'run-ended') this.ended = true;
    const hook = run.agent.checkpoint;
    const hooked = hook === undefined ? undefined : hook(transition, run.state);
    // The store already holds the new run (createRun); a halted run writes nothing more.
    if (transition.kind === 'run-started' || this.halted !== undefined) {
      if (this.halted !== undefined && transition.kind !== 'run-ended')
        return Promise.reject(this.halted.error);
      return Promise.resolve(hooked);
    }
    const state = run.state;
    const nowMs = this.clock.now();
    journalPause(transition, state, nowMs);
    state.checkpointedAtMs = nowMs;
    const text = JSON.stringify(state);
    const ledgerWrite = this.ledgerWriteOf(transition, nowMs);
    const status: RunStatus = transition.kind === 'run-ended' ? transition.status : 'running';
    const write = this.queue.then(() => this.write(transition, status, text, nowMs, ledgerWrite));
    this.queue = write.catch(() => undefined);
    return hooked === undefined ? write : Promise.resolve(hooked).then(() => write);
  }

  /** Stops the heartbeat, waits for the last write, and releases the lease (unless the run halted). */
  async close(): Promise<void> {
    this.ended = true;
    await this.heartbeat.stop();
    await this.queue;
    this.released = true;
    if (this.halted !== undefined) return;
    const { store, owner, storeTimeoutMs } = this.settings;
    try {
      await withStoreTimeout(() => store.releaseLease(this.runId, owner), storeTimeoutMs, this.clock);
    } catch {
      // The lease expires by itself; nothing is lost.
    }
  }

  /** Stops the heartbeat at once (the run is over, whatever happens to its last write). */
  stopHeartbeat(): void {
    void this.heartbeat.stop();
  }

  private endedError(): KeelError {
    return new KeelError('store.conflict', `Run ${this.runId} has ended; nothing more is saved`, {
      data: { runId: this.runId },
    });
  }

  private ledgerWriteOf(transition: RunTransition, nowMs: number): (() => Promise<void>) | undefined {
    const { store } = this.settings;
    if (transition.kind === 'tool-call-started') {
      this.startedKeys.add(transition.idempotencyKey);
      const entry = {
        runId: this.runId,
        idempotencyKey: transition.idempotencyKey,
        step: transition.step,
        callIndex: transition.callIndex,
        toolName: transition.toolName,
        startedAtMs: nowMs,
      };
      return () => store.recordToolStarted(entry);
    }
    if (transition.kind === 'tool-call-completed' && this.startedKeys.has(transition.idempotencyKey)) {
      const call = this.run!.state.pendingToolCalls[transition.callIndex];
      const result = call === undefined ? undefined : ledgerResultOf(call);
      if (result === undefined) return undefined;
      const key = transition.idempotencyKey;
      return () => store.recordToolCompleted(this.runId, key, result, nowMs);
    }
    return undefined;
  }

  private async write(
    transition: RunTransition,
    status: RunStatus,
    text: string,
    nowMs: number,
    ledgerWrite: (() => Promise<void>) | undefined,
  ): Promise<void> {
    if (this.halted !== undefined) throw this.halted.error;
    const startedMs = this.run!.events.active ? this.clock.now() : 0;
    try {
      if (ledgerWrite !== undefined) await this.retrying(ledgerWrite);
      if (this.heartbeat.due()) await this.renewLease();
      this.version = await this.saveState(status, text, nowMs);
    } catch (error) {
      const stopped = this.stop(error);
      this.reportCheckpoint(transition, startedMs, stopped);
      throw stopped;
    }
    this.reportCheckpoint(transition, startedMs, undefined);
  }

  /** The `checkpoint-saved` or `checkpoint-failed` event of a write; a cancellation met on the way is neither. */
  private reportCheckpoint(transition: RunTransition, startedMs: number, failure: unknown): void {
    const run = this.run!;
    if (!run.events.active) return;
    if (failure !== undefined && !(KeelError.isInstance(failure) && failure.code.startsWith('store.')))
      return;
    const atMs = this.clock.now();
    const common = {
      runId: this.runId,
      atMs,
      step: 'step' in transition ? transition.step : run.state.step,
      transition: transition.kind,
      durationMs: atMs - startedMs,
    };
    run.events.emit(
      failure === undefined
        ? { type: 'checkpoint-saved', ...common }
        : { type: 'checkpoint-failed', ...common, errorCode: failure.code },
    );
  }

  private async saveState(status: RunStatus, text: string, nowMs: number): Promise<number> {
    const { store, owner } = this.settings;
    const expectedVersion = this.version;
    const checkpoint: CheckpointWrite = {
      expectedVersion,
      owner,
      status,
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      state: JSON.parse(text) as JsonValue,
      nowMs,
    };
    try {
      return await this.retrying(() => store.saveCheckpoint(this.runId, checkpoint));
    } catch (error) {
      if (!KeelError.isInstance(error) || error.code !== 'store.conflict') throw error;
    }
    const record = await this.retrying(() => store.loadRun(this.runId));
    if (record === undefined) {
      throw new KeelError('store.not_found', `Run ${this.runId} is no longer in the store`, {
        data: { runId: this.runId },
      });
    }
    // An attempt that failed in transit (a dropped connection) may have been written after all.
    if (record.version === expectedVersion + 1 && JSON.stringify(record.state) === text)
      return record.version;
    if (record.cancellation !== undefined) {
      const run = this.run!;
      this.version = record.version;
      if (status !== 'running') {
        // The run reached its end before it learnt of the request: that end is what happened, and the store says so.
        const current = { ...checkpoint, expectedVersion: record.version };
        return this.retrying(() => store.saveCheckpoint(this.runId, current));
      }
      run.abort.cancel(record.cancellation.reason);
      throw run.abort.signal.reason;
    }
    if (record.version !== expectedVersion) {
      throw new KeelError(
        'store.conflict',
        `Run ${this.runId} was advanced by another process (version ${record.version}, expected ${expectedVersion})`,
        { data: { runId: this.runId, expectedVersion, actualVersion: record.version } },
      );
    }
    // Nobody advanced the run, but the lease is no longer ours (it expired): take it back if it is free.
    await this.renewLease();
    return this.retrying(() => store.saveCheckpoint(this.runId, checkpoint));
  }

  private async renewLease(): Promise<void> {
    if (this.released) throw this.endedError();
    const { store, owner, leaseTtlMs } = this.settings;
    const nowMs = this.clock.now();
    await this.retrying(() => store.acquireLease(this.runId, owner, leaseTtlMs, nowMs));
    this.heartbeat.renewed(nowMs);
  }

  private retrying<T>(operation: () => Promise<T>): Promise<T> {
    return withStoreRetries(operation, {
      ...storeCallsOf(this.settings, this.clock),
      onRetry: (error, delayMs, attempt) => this.retried(error, delayMs, attempt),
    });
  }

  private retried(error: KeelError, delayMs: number, attempt: number): void {
    const run = this.run;
    if (run === undefined) return;
    countRetry(run.state.report, 'store', delayMs);
    run.countError(error);
    if (run.events.active) {
      run.events.emit({
        type: 'retry-scheduled',
        runId: this.runId,
        atMs: this.clock.now(),
        step: run.state.step,
        target: 'store',
        name: 'run store',
        attempt,
        delayMs,
        errorCode: error.code,
      });
    }
  }

  /** Halts the run for good after a failed write (a cancellation passes through as it is). */
  private stop(error: unknown): unknown {
    const run = this.run!;
    if (run.abort.aborted && error === run.abort.signal.reason) return error;
    if (this.halted !== undefined) return this.halted.error;
    const keelError = KeelError.isInstance(error)
      ? error
      : new KeelError('store.unavailable', `The run store failed: ${messageOf(error)}`, { cause: error });
    this.halted = {
      stopReason: keelError.code === 'store.conflict' ? 'lease_lost' : 'store_unavailable',
      error: keelError,
    };
    void this.heartbeat.stop();
    run.abort.halt(keelError);
    return keelError;
  }
}
