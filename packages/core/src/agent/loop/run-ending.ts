import { classify } from '../../errors/classify.js';
import { messageOf } from '../../errors/error-chain.js';
import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import { isStopRun, type ToolStop } from '../run/directives.js';
import type { PendingDecision } from '../run/pending-decision.js';
import type { RunContext } from '../run/run-context.js';
import { endRun } from '../run/run-state.js';
import { type StopReason, stopReasonOf, type TerminalStatus } from '../run/stop-reason.js';

/**
 * How a run ends. `output` is the run's output (the validated value with an output schema); `pending`, what an
 * interrupted run waits for.
 */
export interface RunEnding {
  readonly status: TerminalStatus;
  readonly stopReason: StopReason;
  readonly stopDetail?: string;
  readonly output?: unknown;
  readonly error?: KeelError;
  readonly pending?: readonly PendingDecision[];
}

/** A run that failed with `error`. */
export function failedEnding(error: KeelError): RunEnding {
  return { status: 'failed', stopReason: stopReasonOf(error), error };
}

/** A run a tool stopped (`stopRun`): completed, with the tool's reason and output. */
export function stoppedEnding(stop: ToolStop): RunEnding {
  return {
    status: 'completed',
    stopReason: 'stop_requested',
    stopDetail: stop.reason,
    ...(stop.output === undefined ? {} : { output: stop.output }),
  };
}

/** Turns whatever ended the loop by throwing into an ending: cancellation, run timeout, a fault. */
export function endingOf(run: RunContext, thrown: unknown): RunEnding {
  const { abort } = run;
  if (abort.aborted && abort.cause === 'halted') {
    const halted = run.durable?.halted;
    const error = KeelError.isInstance(abort.signal.reason) ? abort.signal.reason : halted?.error;
    return { status: 'interrupted', stopReason: halted?.stopReason ?? 'store_unavailable', error };
  }
  if (abort.aborted) {
    const reason: unknown = abort.signal.reason;
    if (abort.cause === 'timeout' && KeelError.isInstance(reason)) return failedEnding(reason);
    const error =
      KeelError.isInstance(reason) && reason.code === 'run.cancelled'
        ? reason
        : new KeelError('run.cancelled', `Run ${run.runId} was cancelled`, { cause: reason });
    return { status: 'cancelled', stopReason: 'cancelled', error };
  }
  if (isStopRun(thrown)) return stoppedEnding(thrown);
  return failedEnding(KeelError.isInstance(thrown) ? thrown : classify(thrown));
}

/**
 * Records the ending in the state and checkpoints it. When a durable run's store cannot save its end, the stored run
 * stays at its last good checkpoint, so the run ends `interrupted` (to be resumed) rather than claim an end the store
 * does not hold; a cancelled run stays cancelled. Resolves with the ending as it stands.
 */
export async function finish(run: RunContext, reached: RunEnding): Promise<RunEnding> {
  const { state } = run;
  let ending = reached;
  if (ending.error !== undefined) run.countError(ending.error);
  recordEnding(run, ending);
  try {
    if (run.checkpoints) await run.checkpoint({ kind: 'run-ended', status: ending.status });
  } catch (error) {
    const halted = run.durable?.halted;
    if (halted !== undefined && ending.status !== 'interrupted' && ending.status !== 'cancelled') {
      ending = { status: 'interrupted', stopReason: halted.stopReason, error: halted.error };
      run.countError(halted.error);
      delete state.output;
      delete state.stopDetail;
      delete state.error;
      recordEnding(run, ending);
    } else {
      // The run is over either way; a hook that failed to save its end is reported, not allowed to change it.
      process.emitWarning(`keel: the checkpoint of run ${state.runId}'s end failed: ${messageOf(error)}`);
    }
  }
  if (run.events.active) {
    run.events.emit({
      type: 'run-end',
      runId: state.runId,
      atMs: state.endedAtMs ?? run.clock.now(),
      status: ending.status,
      stopReason: ending.stopReason,
      durationMs: state.report.durationMs,
      ...(state.error === undefined ? {} : { error: state.error }),
    });
  }
  return ending;
}

function recordEnding(run: RunContext, ending: RunEnding): void {
  endRun(
    run.state,
    {
      status: ending.status,
      stopReason: ending.stopReason,
      ...(ending.stopDetail === undefined ? {} : { stopDetail: ending.stopDetail }),
      ...(ending.output === undefined ? {} : { output: ending.output as JsonValue }),
      ...(ending.error === undefined ? {} : { error: ending.error.toJSON() }),
      ...(ending.pending === undefined ? {} : { pending: ending.pending }),
    },
    run.clock.now(),
  );
}
