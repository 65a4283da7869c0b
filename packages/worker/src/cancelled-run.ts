import { randomUUID } from 'node:crypto';
import { KeelError, migrateRunState, type RunStore, readQueuedState, serializeError } from '@keel/core';

/**
 * Writes the end of a run cancelled while no process ran it (its worker had died: the store marked it `cancelled`
 * at once) into its state, which still shows its last step in progress: `status` and `stopReason` `cancelled`, the
 * `run.cancelled` error with the request's reason, `endedAtMs`. Leaves alone a run not cancelled, a run cancelled
 * while queued (its state is its input), a state that already says so or that this keel cannot read, and a run a
 * live lease holds. Resolves with whether it wrote.
 */
export async function recordCancellation(store: RunStore, runId: string, nowMs: number): Promise<boolean> {
  const record = await store.loadRun(runId);
  if (record?.status !== 'cancelled' || readQueuedState(record.state) !== undefined) return false;
  let state: ReturnType<typeof migrateRunState>;
  try {
    state = migrateRunState(record.state, runId);
  } catch {
    return false;
  }
  if (state.status === 'cancelled') return false;
  const owner = `keel-worker-cancelling:${randomUUID()}`;
  try {
    await store.acquireLease(runId, owner, 30_000, nowMs);
  } catch (refused) {
    if (KeelError.isInstance(refused) && refused.code === 'store.conflict') return false;
    throw refused;
  }
  const reason = record.cancellation?.reason;
  state.status = 'cancelled';
  state.phase = 'ended';
  state.pendingToolCalls = [];
  state.pendingDecisions = [];
  state.stopReason = 'cancelled';
  delete state.stopDetail;
  state.error = serializeError(
    new KeelError(
      'run.cancelled',
      reason === undefined || reason === ''
        ? `Run ${runId} was cancelled`
        : `Run ${runId} was cancelled: ${reason}`,
      { data: { runId } },
    ),
  );
  state.endedAtMs = record.cancellation?.requestedAtMs ?? nowMs;
  try {
    await store.saveCheckpoint(runId, {
      expectedVersion: record.version,
      owner,
      status: 'cancelled',
      schemaVersion: state.schemaVersion,
      state: JSON.parse(JSON.stringify(state)),
      nowMs,
    });
  } catch (refused) {
    if (KeelError.isInstance(refused) && refused.code === 'store.conflict') return false;
    throw refused;
  } finally {
    await store.releaseLease(runId, owner);
  }
  return true;
}
