import { messageOf } from '../../errors/error-chain.js';
import { KeelError } from '../../errors/keel-error.js';
import type { Clock, TimerHandle } from '../../policies/clock.js';
import type { Message } from '../../spec/model.js';
import type { CheckpointWrite, RunStatus, StepCreate } from '../../spec/run-store.js';
import type { DurableHalt, DurableLink } from '../run/agent-runtime.js';
import type { DurabilitySettings } from '../run/durability.js';
import type { RunContext } from '../run/run-context.js';
import type { RunState, RunTransition } from '../run/run-state.js';
import { reportCheckpoint, reportStoreRetry } from './durable-reports.js';
import {
  carriedByNext,
  checkpointOf,
  holdsSnapshot,
  IDEMPOTENT_WAIT_MS,
  isIdempotentCall,
  journalPause,
} from './durable-writes.js';
import { JournalLogCursor } from './journal-log-cursor.js';
import { LeaseHeartbeat } from './lease-heartbeat.js';
import { LedgerBuffer, type LedgerWrites } from './ledger-buffer.js';
import { MessageLogCursor, type StateSnapshot } from './message-log-cursor.js';
import { storeCallsOf, withStoreRetries, withStoreTimeout } from './store-calls.js';

/**
 * Saves one run to its store: a checkpoint after every transition (awaited, in order, one at a time), the tool
 * ledger (a call is recorded as started before it runs, and as completed, with its result, before the state says
 * so), and the run's lease (renewed at checkpoints and by a heartbeat while a long call runs, released at the end).
 * Every store operation is bounded by `storeTimeoutMs`.
 *
 * A transition after which only local work happens before the next one is carried by that next write instead of
 * written alone: a model response is saved with its first tool call's start (or the run's end), and the last call of
 * a step completing is saved with the step's end. Nothing runs outside the process (no tool, no model call) while a
 * transition waits, so no effect can happen that the store does not know of, with one exception: with a store that
 * sets `ranCallsInCommit`, the start and end of a call whose tool and fallback tools are all idempotent wait for the
 * next write too (running it again is harmless), so a step of such calls is one write; a call still running after
 * {@link IDEMPOTENT_WAIT_MS}, or starting a child run, has the writes waiting made first. With a store that has
 * `commitStep`, a write's ledger entries, checkpoint and lease renewal go in one transaction (and the run's end frees
 * the lease).
 *
 * A write that fails with `store.unavailable` is retried (`storeMaxAttempts`); when it still fails, or the lease is
 * lost to another process, the run halts: its signal aborts and it ends `interrupted`, the store keeping the last
 * good checkpoint. A checkpoint refused because another process asked for cancellation (the version moved) ends the
 * run as `cancelled`, unless the run had already reached its end: that end is saved.
 *
 * Once the run's end is saved (or the run closed), nothing more is written: work of a cancelled run that goes on in
 * the background (a slow validator or approval check) can never bring the stored run back to life.
 *
 * {@link pause} stops the run at its next checkpoint with no tool call running: calls already running finish and are
 * saved (a call of their step may still start beside them), no call starts once none runs, the state is saved and
 * the lease freed, and the run ends `interrupted` (`paused`).
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
  /** Ledger writes that go with the next store write. */
  private readonly ledger: LedgerBuffer;
  /** A transition's state carried by the next write (see the class notes), serialised when it happened. */
  private carried:
    | { transitions: RunTransition[]; snapshot: StateSnapshot | undefined; nowMs: number }
    | undefined;
  /** Where the run's message log stands, for a store that keeps one (`RunStore.messageLog`). */
  private readonly messageLog: MessageLogCursor | undefined;
  /** Where the run's journal log stands, for a store that keeps one (`RunStore.journalLog`). */
  private readonly journalLog: JournalLogCursor | undefined;
  /** Set when the run may be paused (see {@link pause}); defaults to false. */
  pausable = false;
  /** Set once {@link pause} was asked for. */
  private pausing = false;
  /** Set once the end's write freed the lease. */
  private leaseFreed = false;
  /** Writes handed to the queue and not yet settled. */
  private pendingWrites = 0;
  /** Told when the run halts. */
  private onHalted: Array<(halt: DurableHalt) => void> = [];
  /** The run its first write creates (see {@link createdByFirstWrite}); undefined once it is stored. */
  private create: StepCreate | undefined;
  /** Whether an idempotent call's start and end may wait for the next write (the store takes `StepCommit.toolsRan`). */
  private readonly callsWait: boolean;
  /** Writes the carried transitions once an idempotent call's start or end waited {@link IDEMPOTENT_WAIT_MS}. */
  private waitTimer: TimerHandle | undefined;

  constructor(
    private readonly settings: DurabilitySettings,
    readonly runId: string,
    version: number,
    private readonly clock: Clock,
    leaseTakenAtMs: number,
    startedKeys: Iterable<string> = [],
    loggedMessages: readonly Message[] = [],
    journalEnd: number | undefined = undefined,
  ) {
    this.version = version;
    this.messageLog = settings.store.messageLog === true ? new MessageLogCursor(loggedMessages) : undefined;
    this.journalLog = settings.store.journalLog === true ? new JournalLogCursor(journalEnd) : undefined;
    this.callsWait = settings.store.ranCallsInCommit === true && settings.store.commitStep !== undefined;
    this.ledger = new LedgerBuffer(runId, startedKeys, this.callsWait);
    this.heartbeat = new LeaseHeartbeat(settings, runId, clock, leaseTakenAtMs, (error) => this.stop(error));
  }

  /**
   * Makes the run's first write create it (`StepCommit.create`, for a store with `createsInCommit`), in the same
   * transaction: the version is 0 until then, and no lease is renewed or freed before it.
   */
  createdByFirstWrite(create: StepCreate): void {
    this.create = create;
    this.version = 0;
  }

  /** Binds the run being saved and starts the lease heartbeat (once the run is stored). */
  attach(run: RunContext): void {
    this.run = run;
    if (this.create === undefined) this.heartbeat.start();
    if (this.pausing) this.queue = this.queue.then(() => this.pauseIfQuiet());
  }

  /**
   * Pauses the run at its next checkpoint with no tool call running (see the class notes): for a worker that shuts
   * down. Does nothing once the run has ended or halted. Set {@link pausable} first, so that a transition waiting for
   * the next write is kept as it was and saved by the pause.
   */
  pause(): void {
    if (this.pausing || this.ended || this.halted !== undefined) return;
    this.pausing = true;
    if (this.run !== undefined) this.queue = this.queue.then(() => this.pauseIfQuiet());
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
    // While the run pauses, a call starts only beside calls still running (the step goes on until none runs);
    // otherwise the run halts here, after the writes before it: nothing is written after this refused start.
    if (this.pausing && transition.kind === 'tool-call-started' && this.ledger.runningCalls === 0) {
      this.queue = this.queue.then(() => this.pauseIfQuiet());
      return this.haltedSoon().then((halt) => Promise.reject(halt.error));
    }
    const state = run.state;
    const nowMs = this.clock.now();
    journalPause(transition, state, nowMs);
    state.checkpointedAtMs = nowMs;
    this.ledger.record(transition, state, nowMs);
    const idempotentCall = this.callsWait && isIdempotentCall(transition, run.agent.tools);
    if (!this.pausing && carriedByNext(transition, state, idempotentCall)) {
      // Its state is written by the next write; only a pause may need it before, as it is now.
      const snapshot = this.pausable ? this.snapshotOf(state) : undefined;
      this.carried = { transitions: [...(this.carried?.transitions ?? []), transition], snapshot, nowMs };
      if (idempotentCall && this.waitTimer === undefined)
        this.waitTimer = this.clock.setTimeout(() => this.writeWaiting(), IDEMPOTENT_WAIT_MS);
      return Promise.resolve(hooked);
    }
    const write = this.enqueue([...(this.carried?.transitions ?? []), transition], nowMs);
    return hooked === undefined ? write : Promise.resolve(hooked).then(() => write);
  }

  /**
   * Writes the transitions waiting for the next write now, with the state as it is (between transitions: each one
   * changes it at once), and resolves once every write so far is saved; rejects as a failed write does.
   */
  saved(): Promise<void> {
    if (this.carried !== undefined && !this.ended && this.halted === undefined) {
      const nowMs = this.clock.now();
      this.run!.state.checkpointedAtMs = nowMs;
      return this.enqueue(this.carried.transitions, nowMs);
    }
    if (this.halted !== undefined) return Promise.reject(this.halted.error);
    return this.queue.then(() => undefined);
  }

  /**
   * Queues the write of `transitions` (the last one the transition now, those before it carried): the state as it is
   * now, with the ledger writes owed. Resolves once it is saved.
   */
  private enqueue(transitions: RunTransition[], nowMs: number): Promise<void> {
    this.clearWaitTimer();
    const last = transitions.at(-1)!;
    const snapshot = this.snapshotOf(this.run!.state);
    this.carried = undefined;
    const ledger = this.ledger.take();
    const status: RunStatus = last.kind === 'run-ended' ? last.status : 'running';
    const end = last.kind === 'run-ended';
    this.pendingWrites++;
    const write = this.queue
      .then(() => this.write(transitions, status, snapshot, nowMs, ledger, end))
      .finally(() => this.pendingWrites--);
    this.queue = write.catch(() => undefined);
    if (this.pausing) this.queue = this.queue.then(() => this.pauseIfQuiet());
    return write;
  }

  /**
   * An idempotent call's start or end waited {@link IDEMPOTENT_WAIT_MS} for the next write: what waits (the
   * model's response, the calls' starts and ends) is written now. A failed write halts the run, as any write does.
   */
  private writeWaiting(): void {
    this.waitTimer = undefined;
    this.saved().catch(() => undefined);
  }

  private clearWaitTimer(): void {
    if (this.waitTimer === undefined) return;
    this.clock.clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
  }

  /**
   * What a write of the state saves now: its text, and for a store with a message log, the state without its messages
   * and the messages since the last write that succeeded.
   */
  private snapshotOf(state: RunContext['state']): StateSnapshot {
    const journal = this.journalLog?.snapshot(state.journal);
    // The state as written: its journal's entries replaced by their count when they go to the store's journal log.
    const written =
      journal === undefined ? state : ({ ...state, journal: journal.field } as unknown as RunState);
    if (this.messageLog === undefined) return { text: JSON.stringify(written), ...(journal && { journal }) };
    return { ...this.messageLog.snapshot(written), ...(journal && { journal }) };
  }

  /** Stops the heartbeat, waits for the last write, and releases the lease (unless the run halted). */
  async close(): Promise<void> {
    this.ended = true;
    this.clearWaitTimer();
    await this.heartbeat.stop();
    await this.queue;
    this.released = true;
    if (
      this.create !== undefined ||
      this.leaseFreed ||
      (this.halted !== undefined && this.halted.stopReason !== 'paused')
    )
      return;
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

  private async write(
    transitions: readonly RunTransition[],
    status: RunStatus,
    snapshot: StateSnapshot,
    nowMs: number,
    ledger: LedgerWrites,
    end: boolean,
  ): Promise<void> {
    if (this.halted !== undefined) throw this.halted.error;
    const { store } = this.settings;
    const startedMs = this.run!.events.active ? this.clock.now() : 0;
    try {
      if (store.commitStep === undefined) {
        for (const entry of ledger.started) await this.retrying(() => store.recordToolStarted(entry));
        for (const { idempotencyKey, result, completedAtMs } of ledger.completed) {
          await this.retrying(() =>
            store.recordToolCompleted(this.runId, idempotencyKey, result, completedAtMs),
          );
        }
        if (this.heartbeat.due()) await this.renewLease();
      } else if (end) {
        // The end's write frees the lease: no renewal in flight may land after it.
        await this.heartbeat.stop();
      }
      this.version = await this.saveState(status, snapshot, nowMs, ledger, end);
      this.messageLog?.written(snapshot);
      this.journalLog?.written(snapshot.journal);
    } catch (error) {
      const stopped = this.stop(error);
      for (const transition of transitions) reportCheckpoint(this.run!, transition, startedMs, stopped);
      throw stopped;
    }
    for (const transition of transitions) reportCheckpoint(this.run!, transition, startedMs, undefined);
  }

  /** One write of a checkpoint: with its ledger writes and lease in one commit when the store can. */
  private persist(
    checkpoint: CheckpointWrite,
    text: string,
    ledger: LedgerWrites,
    end: boolean,
  ): Promise<number> {
    const { store, leaseTtlMs } = this.settings;
    if (store.commitStep === undefined) return store.saveCheckpoint(this.runId, checkpoint);
    const create = this.create;
    return store
      .commitStep(this.runId, {
        checkpoint,
        stateText: text,
        ...(ledger.started.length === 0 ? {} : { toolsStarted: ledger.started }),
        ...(ledger.completed.length === 0 ? {} : { toolsCompleted: ledger.completed }),
        ...(ledger.ran.length === 0 ? {} : { toolsRan: ledger.ran }),
        ...(end ? { releaseLease: true } : { leaseTtlMs }),
        ...(create === undefined ? {} : { create }),
      })
      .then((version) => {
        if (end) this.leaseFreed = true;
        else this.heartbeat.renewed(checkpoint.nowMs);
        if (create !== undefined) this.stored();
        return version;
      });
  }

  /** The run's record is stored (its first write created it): later writes expect it, and its lease is kept alive. */
  private stored(): void {
    if (this.create === undefined) return;
    this.create = undefined;
    this.heartbeat.start();
  }

  private async saveState(
    status: RunStatus,
    snapshot: StateSnapshot,
    nowMs: number,
    ledger: LedgerWrites,
    end: boolean,
  ): Promise<number> {
    const { store, owner } = this.settings;
    const expectedVersion = this.version;
    const checkpoint = checkpointOf({ expectedVersion, owner, status, nowMs }, snapshot);
    const persist = (current: CheckpointWrite) =>
      this.retrying(() => this.persist(current, snapshot.text, ledger, end));
    try {
      return await persist(checkpoint);
    } catch (error) {
      if (!KeelError.isInstance(error) || error.code !== 'store.conflict') throw error;
    }
    const record = await this.retrying(() => store.loadRun(this.runId));
    if (record === undefined) {
      throw new KeelError('store.not_found', `Run ${this.runId} is no longer in the store`, {
        data: { runId: this.runId },
      });
    }
    // A write that was to create the run finds it stored: by an attempt of its own whose answer was lost, or by
    // another process (then the version differs, below).
    this.stored();
    // An attempt that failed in transit (a dropped connection) may have been written after all.
    if (holdsSnapshot(record, expectedVersion + 1, snapshot)) return record.version;
    if (record.cancellation !== undefined) {
      const run = this.run!;
      this.version = record.version;
      if (status !== 'running') {
        // The run reached its end before it learnt of the request: that end is what happened, and the store says so.
        return persist(checkpointOf({ ...checkpoint, expectedVersion: record.version }, snapshot));
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
    return persist(checkpoint);
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
      onRetry: (error, delayMs, attempt) => {
        if (this.run !== undefined) reportStoreRetry(this.run, error, delayMs, attempt);
      },
    });
  }

  /** Once the run pauses and no call runs: saves a carried transition, then halts the run as paused. */
  private async pauseIfQuiet(): Promise<void> {
    const quiet = this.ledger.runningCalls === 0 && this.pendingWrites === 0;
    if (!this.pausing || !quiet || this.halted !== undefined || this.ended) return;
    const carried = this.carried;
    this.carried = undefined;
    if (carried?.snapshot !== undefined) {
      try {
        await this.write(
          carried.transitions,
          'running',
          carried.snapshot,
          carried.nowMs,
          this.ledger.take(),
          false,
        );
      } catch {
        // The write halted the run (store_unavailable, lease_lost): that says more than a pause would.
        return;
      }
    }
    const error = new KeelError(
      'run.interrupted',
      `Run ${this.runId} paused at its last checkpoint (its worker is shutting down); resume it to go on`,
      { data: { runId: this.runId, reason: 'paused' } },
    );
    this.halt({ stopReason: 'paused', error });
  }

  /** Resolves with the halt once the run halts. */
  private haltedSoon(): Promise<DurableHalt> {
    if (this.halted !== undefined) return Promise.resolve(this.halted);
    return new Promise((resolve) => this.onHalted.push(resolve));
  }

  private halt(halt: DurableHalt): void {
    this.halted = halt;
    this.clearWaitTimer();
    void this.heartbeat.stop();
    this.run!.abort.halt(halt.error);
    for (const notify of this.onHalted.splice(0)) notify(halt);
  }

  /** Halts the run for good after a failed write (a cancellation passes through as it is). */
  private stop(error: unknown): unknown {
    const run = this.run!;
    if (run.abort.aborted && error === run.abort.signal.reason) return error;
    if (this.halted !== undefined) return this.halted.error;
    const keelError = KeelError.isInstance(error)
      ? error
      : new KeelError('store.unavailable', `The run store failed: ${messageOf(error)}`, { cause: error });
    this.halt({
      stopReason: keelError.code === 'store.conflict' ? 'lease_lost' : 'store_unavailable',
      error: keelError,
    });
    return keelError;
  }
}
