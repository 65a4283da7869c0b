import type { CompletedToolCall, StartedToolCall } from '../../spec/run-store.js';
import type { RunState, RunTransition } from '../run/run-state.js';
import { ledgerResultOf } from './ledger-result.js';

/** Ledger writes waiting for the next store write. */
export interface LedgerWrites {
  started: StartedToolCall[];
  completed: CompletedToolCall[];
}

/**
 * The tool ledger entries a durable run owes its store: a call recorded as started before it runs, and as completed
 * (with its result) before the state says so. They wait here until the next store write carries them, and the calls
 * running now are known, so a pause can wait until none runs.
 */
export class LedgerBuffer {
  private readonly startedKeys: Set<string>;
  private readonly running = new Set<string>();
  private writes: LedgerWrites = { started: [], completed: [] };

  /** `startedKeys`: the calls the store's ledger already records as started (a resumed run's). */
  constructor(
    private readonly runId: string,
    startedKeys: Iterable<string>,
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
    this.running.delete(transition.idempotencyKey);
    if (!this.startedKeys.has(transition.idempotencyKey)) return;
    const call = state.pendingToolCalls[transition.callIndex];
    const result = call === undefined ? undefined : ledgerResultOf(call);
    if (result === undefined) return;
    this.writes.completed.push({ idempotencyKey: transition.idempotencyKey, result, completedAtMs: nowMs });
  }

  /** The writes recorded since the last take, for the store write about to be made. */
  take(): LedgerWrites {
    const writes = this.writes;
    this.writes = { started: [], completed: [] };
    return writes;
  }
}
