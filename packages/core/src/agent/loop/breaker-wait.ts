import { KeelError } from '../../errors/keel-error.js';
import type { ModelSlot } from '../run/agent-runtime.js';
import { countRetry } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';

/** What each run has waited on open breakers so far, in milliseconds (bounded by `retry.waitForOpenBreakerMs`). */
const waitedByRun = new WeakMap<RunContext, number>();

/**
 * The model's breaker refused the call (`policy.circuit_open`) and no fallback is left: rather than fail the run at
 * once, waits for the breaker's half-open moment (the refusal's `retryAfterMs`, read as a Retry-After) when the run
 * can afford it, then lets the caller call the model again. Resolves `false`, without waiting, when it cannot: the
 * breaker is isolated, the half-open moment or the end of the Retry-After of the failure that opened the breaker (a
 * probe sent before it cannot succeed) lies beyond `retry.waitForOpenBreakerMs` (all waits of the run together) or
 * the run's deadline, or the retry budget refuses (each wait takes one retry from it).
 *
 * A breaker already half-open lets one probe through and refuses the others until the probe deadline: those runs
 * wait for the breaker's next move (closed: go on; open again: wait again, within the same bounds) rather than for
 * the deadline. Every wait is a model retry in the report (`retries.model`, `waitingMs`) and a `retry-scheduled`
 * event with `errorCode: 'policy.circuit_open'`. An abort during the wait rejects with the run's abort reason.
 */
export async function waitForOpenBreaker(
  run: RunContext,
  slot: ModelSlot,
  refusal: KeelError,
): Promise<boolean> {
  const breaker = slot.breaker;
  const remainingMs = refusal.retryAfterMs;
  if (breaker === undefined || remainingMs === undefined || refusal.code !== 'policy.circuit_open')
    return false;
  const { clock, state } = run;
  const waitedMs = waitedByRun.get(run) ?? 0;
  const allowedMs = Math.min(
    run.agent.retry.waitForOpenBreakerMs - waitedMs,
    state.deadlineAtMs - clock.now() - 1,
  );
  const halfOpen = refusal.data.state === 'half-open';
  // Open: worth waiting only if the half-open moment comes within the bounds, and so does the end of the Retry-After
  // of the failure that opened the breaker (a probe sent before it cannot succeed). Half-open: the probe's outcome
  // may come at any time before its deadline, so wait for it as long as the bounds allow.
  if (halfOpen ? allowedMs <= 0 : Math.max(remainingMs, openingRetryAfterMs(refusal)) > allowedMs)
    return false;
  const waitMs = halfOpen ? Math.min(remainingMs, allowedMs) : remainingMs;
  if (!run.budget.tryAcquireRetry()) return false;
  if (run.events.active) {
    run.events.emit({
      type: 'retry-scheduled',
      runId: run.runId,
      atMs: clock.now(),
      step: state.step,
      target: 'model',
      name: slot.key,
      attempt: 1,
      delayMs: waitMs,
      errorCode: refusal.code,
    });
  }
  const startedMs = clock.now();
  await new Promise<void>((resolve, reject) => {
    const signal = run.abort.signal;
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const finish = () => {
      clock.clearTimeout(timer);
      moves.dispose();
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      finish();
      resolve();
    }, waitMs);
    // Closed or open again after a probe: the refusal's remaining time no longer holds, call (or decide) again now.
    const moves = breaker.onStateChange((transition) => {
      if (transition.to === 'half-open') return;
      finish();
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const elapsedMs = clock.now() - startedMs;
  waitedByRun.set(run, waitedMs + elapsedMs);
  countRetry(state.report, 'model', elapsedMs);
  return true;
}

/**
 * The Retry-After the failure that opened the breaker asked for (the refusal's `cause`: a 429 with Retry-After, say),
 * 0 when it asked for none. Counted from now, though that failure came earlier: an upper bound, so a run may fail at
 * once where waiting would just have paid off, never the reverse.
 */
function openingRetryAfterMs(refusal: KeelError): number {
  const cause = refusal.cause;
  if (!KeelError.isInstance(cause)) return 0;
  return cause.retryAfterMs ?? 0;
}
