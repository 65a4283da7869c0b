// What a durable run's writes tell its run: the `checkpoint-saved` and `checkpoint-failed` events of each transition
// a write carried, and the store retries (counted in the report, and a `retry-scheduled` event).
import { KeelError } from '../../errors/keel-error.js';
import { countRetry } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import type { RunTransition } from '../run/run-state.js';

/**
 * The `checkpoint-saved` or `checkpoint-failed` event of a transition a write carried (each transition gets its own,
 * with the write's duration since `startedMs`); a cancellation met on the way (`failure` not a store error) is
 * neither.
 */
export function reportCheckpoint(
  run: RunContext,
  transition: RunTransition,
  startedMs: number,
  failure: unknown,
): void {
  if (!run.events.active) return;
  if (failure !== undefined && !(KeelError.isInstance(failure) && failure.code.startsWith('store.'))) return;
  const atMs = run.clock.now();
  const common = {
    runId: run.runId,
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

/** A store operation of the run about to be tried again after `delayMs`: counted, and told as `retry-scheduled`. */
export function reportStoreRetry(run: RunContext, error: KeelError, delayMs: number, attempt: number): void {
  countRetry(run.state.report, 'store', delayMs);
  run.countError(error);
  if (!run.events.active) return;
  run.events.emit({
    type: 'retry-scheduled',
    runId: run.runId,
    atMs: run.clock.now(),
    step: run.state.step,
    target: 'store',
    name: 'run store',
    attempt,
    delayMs,
    errorCode: error.code,
  });
}
