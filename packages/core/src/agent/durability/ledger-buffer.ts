import type { CompletedToolCall, RanToolCall, StartedToolCall } from '../../spec/run-store.js';
import type { RunState, RunTransition } from '../run/run-state.js';
import { ledgerResultOf } from './ledger-result.js';

/** Ledger writes waiting for the next store write. */
export interface LedgerWrites {
  started: StartedToolCall[];
  completed: CompletedToolCall[];
  /** Calls whose start had not been written yet when they completed (see {@link LedgerBuffer}). */
  ran: RanToolCall[];
}

/**
 * The tool ledger entries a durable run owes its store: a call recorded as started before it runs, and as completed
 * (with its result) before the state says so. They wait here until the next store write carries them, and the calls
 * running now are known, so a pause can wait until none runs. With `foldsRan` (a store that takes
 * `StepCommit.toolsRan`), a call that completes while its start still waits here becomes one `ran` entry.
 */
export class LedgerBuffer {
  private readonly startedKeys: Set<string>;
  private readonly running = new Set<string>();
  private writes: LedgerWrites = { started: [], completed: [], ran: [] };

  /** `startedKeys`: the calls the store's ledger already records as started (a resumed run's). */
  constructor(
    private readonly runId: string,
    startedKeys: Iterable<string>,
    private readonly foldsRan = false,
  ) {
    this.startedKeys = new Set(startedKeys);
  }

  /** How many tool calls are running now. */
  get runningCalls(): number {
    return this.running.size;
  }

  /** Adds the ledger write a transition makes, if any. `state` is the run's state after the transition. */
  record(transition: RunTransition, state: RunState, nowMs: number): void {
    if (transition.kind === 'tool-call-started') {
      this.startedKeys.add(transition.idempotencyKey);
      this.running.add(transition.idempotencyKey);
      this.writes.started.push({
        runId: this.runId,
        idempotencyKey: transition.idempotencyKey,
        step: transition.step,
        callIndex: transition.callIndex,
        toolName: transition.toolName,
        startedAtMs: nowMs,
      });
      return;
    }
    if (transition.kind !== 'tool-call-completed') return;
    const key = transition.idempotencyKey;
    this.running.delete(key);
    if (!this.startedKeys.has(key)) return;
    const call = state.pendingToolCalls[transition.callIndex];
    const result = call === undefined ? undefined : ledgerResultOf(call);
    if (result === undefined) return;
    const waiting = this.foldsRan
      ? this.writes.started.findIndex((entry) => entry.idempotencyKey === key)
      : -1;
    if (waiting === -1) {
      this.writes.completed.push({ idempotencyKey: key, result, completedAtMs: nowMs });
      return;
    }
    const [started] = this.writes.started.splice(waiting, 1);
    this.writes.ran.push({ ...started!, result, completedAtMs: nowMs });
  }

  /** The writes recorded since the last take, for the store write about to be made. */
  take(): LedgerWrites {
    const writes = this.writes;
    this.writes = { started: [], completed: [], ran: [] };
    return writes;
  }
}
