import type { JsonValue } from '../../errors/keel-error.js';
import { migrateRunState } from '../durability/run-state-migrations.js';
import { storeCallsOf, toStoreError, withStoreRetries } from '../durability/store-calls.js';
import type { RunResult } from '../loop/run.js';
import type { AgentRuntime } from '../run/agent-runtime.js';
import { type RunSessionOutcome, sessionTurnsOf } from '../run/session-state.js';
import { wakeSessionWaiters } from './session-waiters.js';

/**
 * Settles a session run once it has stopped: a completed run appends its turns to the session (and lets go of it);
 * a failed or cancelled one lets go of it with nothing appended (the session holds completed turns only); an
 * interrupted one keeps holding it. Resolves with the result and what became of its turns (`result.session`); a store
 * that fails here leaves the run's turns `unsaved`, to be appended later, and never changes how the run ended. A run
 * on no session is returned as it is.
 */
export async function settleSession<Output>(
  runtime: AgentRuntime,
  result: RunResult<Output>,
): Promise<RunResult<Output>> {
  const session = result.state.session;
  const durability = runtime.durability;
  if (session === undefined || durability === undefined) return result;
  const { sessionId } = session;
  const outcome = (fields: Omit<RunSessionOutcome, 'sessionId'>): RunResult<Output> => ({
    ...result,
    session: { sessionId, ...fields },
  });
  if (result.status === 'interrupted') return outcome({ outcome: 'held' });
  const { store } = durability;
  const { clock } = runtime;
  const retry = storeCallsOf(durability, clock);
  try {
    if (result.status === 'completed') {
      const version = await withStoreRetries(
        () =>
          store.appendSessionTurn(sessionId, {
            runId: result.runId,
            expectedVersion: session.baseVersion,
            messages: sessionTurnsOf(result.state) as unknown as JsonValue[],
            nowMs: clock.now(),
          }),
        retry,
      );
      wakeSessionWaiters(sessionId);
      return outcome({ outcome: 'saved', version });
    }
    await withStoreRetries(() => store.releaseSession(sessionId, result.runId, clock.now()), retry);
  } catch (error) {
    if (result.status === 'completed') return outcome({ outcome: 'unsaved', error: toStoreError(error) });
    // A run that failed or was cancelled frees its session by its stored status alone: nothing is lost.
  }
  wakeSessionWaiters(sessionId);
  return outcome({ outcome: 'discarded' });
}

/**
 * Appends the turns of a completed run that still holds its session (its process stopped, or its store failed,
 * between the run's end and the append), so that the session can go on. Resolves with whether the run's turns are now
 * in the session; false when the run is not a completed run on a session.
 */
export async function settleCompletedHolder(runtime: AgentRuntime, runId: string): Promise<boolean> {
  const durability = runtime.durability!;
  const { store } = durability;
  const retry = storeCallsOf(durability, runtime.clock);
  const record = await withStoreRetries(() => store.loadRun(runId), retry);
  if (record?.status !== 'completed') return false;
  const state = migrateRunState(record.state, runId);
  const session = state.session;
  if (session === undefined) return false;
  await withStoreRetries(
    () =>
      store.appendSessionTurn(session.sessionId, {
        runId,
        expectedVersion: session.baseVersion,
        messages: sessionTurnsOf(state) as unknown as JsonValue[],
        nowMs: runtime.clock.now(),
      }),
    retry,
  );
  wakeSessionWaiters(session.sessionId);
  return true;
}
