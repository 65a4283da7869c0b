import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { Clock, TimerHandle } from '../policies/clock.js';
import type { RunStatus } from '../spec/run-store.js';
import { type DurabilitySettings, withStoreRetries } from './durability.js';
import { countRetry } from './report.js';
import type { RunContext } from './run-context.js';
import { RUN_STATE_SCHEMA_VERSION, type RunTransition, type StopReason } from './run-state.js';

/** Why a durable run had to stop: it can no longer save its state. */
export interface DurableHalt {
  readonly stopReason: Extract<StopReason, 'store_unavailable' | 'lease_lost'>;
  readonly error: KeelError;
}

/**
 * Saves one run to its store: a checkpoint after every transition (awaited, in order, one at a time), the tool
 * ledger (a call is recorded as started before it runs, and as completed, with its result, before the state says
 * so), and the run's lease (renewed at checkpoints and by a heartbeat while a long call runs, released at the end).
 *
 * A write that fails with `store.unavailable` is retried (`storeMaxAttempts`); when it still fails, or the lease is
 * lost to another process, the run halts: its signal aborts and it ends `interrupted`, the store keeping the last
 * good checkpoint. A checkpoint refused because another process asked for cancellation (the version moved) ends the
 * run as `cancelled`.
 */
export class DurableRun {
  /** The stored record's version, which the next checkpoint expects. */
  version: number;
  /** Set once the run can no longer be saved. */
  halted: DurableHalt | undefined;
  private run: RunContext | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private leaseRenewedAtMs: number;
  private heartbeat: TimerHandle | undefined;
  private closed = false;
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
    this.leaseRenewedAtMs = leaseTakenAtMs;
    this.startedKeys = new Set(startedKeys);
  }

  /** Binds the run being saved and starts the lease heartbeat. */
  attach(run: RunContext): void {
    this.run = run;
    this.scheduleHeartbeat();
  }

  /**
   * The checkpoint of one transition: the agent's checkpoint hook first, then the ledger entry and the state, in
   * the store. The state is serialised at once, so later changes cannot leak into this checkpoint.
   */
  save(transition: RunTransition): Promise<void> {
    const run = this.run!;
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
    state.checkpointedAtMs = nowMs;
    const text = JSON.stringify(state);
    const ledgerWrite = this.ledgerWriteOf(transition, nowMs);
    const status: RunStatus = transition.kind === 'run-ended' ? transition.status : 'running';
    const write = this.queue.then(() => this.write(status, text, ledgerWrite));
    this.queue = write.catch(() => undefined);
    return hooked === undefined ? write : Promise.resolve(hooked).then(() => write);
  }

  /** Stops the heartbeat, waits for the last write, and releases the lease (unless the run halted). */
  async close(): Promise<void> {
    this.stopHeartbeat();
    await this.queue;
    if (this.halted !== undefined) return;
    try {
      await this.settings.store.releaseLease(this.runId, this.settings.owner);
    } catch {
      // The lease expires by itself; nothing is lost.
    }
  }

  /** Stops the heartbeat at once (the run is over, whatever happens to its last write). */
  stopHeartbeat(): void {
    this.closed = true;
    if (this.heartbeat !== undefined) this.clock.clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
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
      const result = this.run!.state.pendingToolCalls[transition.callIndex]?.result;
      if (result === undefined) return undefined;
      const key = transition.idempotencyKey;
      return () => store.recordToolCompleted(this.runId, key, result as JsonValue, nowMs);
    }
    return undefined;
  }

  private async write(status: RunStatus, text: string, ledgerWrite: (() => Promise<void>) | undefined) {
    if (this.halted !== undefined) throw this.halted.error;
    try {
      if (ledgerWrite !== undefined) await this.retrying(ledgerWrite);
      if (this.clock.now() - this.leaseRenewedAtMs >= this.renewEveryMs) await this.renewLease();
      this.version = await this.saveState(status, text);
    } catch (error) {
      throw this.stop(error);
    }
  }

  private async saveState(status: RunStatus, text: string): Promise<number> {
    const { store, owner } = this.settings;
    const expectedVersion = this.version;
    const checkpoint = {
      expectedVersion,
      owner,
      status,
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      state: JSON.parse(text) as JsonValue,
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
    const { store, owner, leaseTtlMs } = this.settings;
    const nowMs = this.clock.now();
    await this.retrying(() => store.acquireLease(this.runId, owner, leaseTtlMs, nowMs));
    this.leaseRenewedAtMs = Math.max(this.leaseRenewedAtMs, nowMs);
  }

  private get renewEveryMs(): number {
    return Math.max(1, Math.floor(this.settings.leaseTtlMs / 3));
  }

  private retrying<T>(operation: () => Promise<T>): Promise<T> {
    return withStoreRetries(operation, {
      maxAttempts: this.settings.storeMaxAttempts,
      clock: this.clock,
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
      : new KeelError('store.unavailable', `The run store failed: ${String(error)}`, { cause: error });
    this.halted = {
      stopReason: keelError.code === 'store.conflict' ? 'lease_lost' : 'store_unavailable',
      error: keelError,
    };
    this.stopHeartbeat();
    run.abort.halt(keelError);
    return keelError;
  }

  private scheduleHeartbeat(): void {
    if (this.closed) return;
    const handle = this.clock.setTimeout(() => this.beat(), this.renewEveryMs);
    (handle as { unref?: () => void } | undefined)?.unref?.();
    this.heartbeat = handle;
  }

  /** Renews the lease while no checkpoint did for a third of its TTL (a long model or tool call is running). */
  private beat(): void {
    this.heartbeat = undefined;
    if (this.closed) return;
    const nowMs = this.clock.now();
    if (nowMs - this.leaseRenewedAtMs < this.renewEveryMs) {
      this.scheduleHeartbeat();
      return;
    }
    const { store, owner, leaseTtlMs } = this.settings;
    store.acquireLease(this.runId, owner, leaseTtlMs, nowMs).then(
      () => {
        this.leaseRenewedAtMs = Math.max(this.leaseRenewedAtMs, nowMs);
        this.scheduleHeartbeat();
      },
      (error: unknown) => {
        if (this.closed) return;
        // Another process holds the lease now: this one must stop. An outage is left to the next checkpoint.
        if (KeelError.isInstance(error) && error.code === 'store.conflict') this.stop(error);
        else this.scheduleHeartbeat();
      },
    );
  }
}
