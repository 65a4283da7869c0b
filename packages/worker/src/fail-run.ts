import { randomUUID } from 'node:crypto';
import {
  type JsonValue,
  KeelError,
  migrateRunState,
  type RunRecord,
  type RunStore,
  readQueuedState,
  serializeError,
} from '@keel/core';

/** BullMQ's reason for a job that lost its worker more than `maxStalledCount` times. */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

/**
 * The typed error a job failed with for good: the KeelError it carries (itself, or as `cause`);
 * `policy.retries_exhausted` for a job that lost its worker more than `maxStalls` times (taken again each time, then
 * given up); `internal.unexpected` for anything else thrown.
 */
export function jobFailure(error: unknown, runId: string, maxStalls: number): KeelError {
  if (KeelError.isInstance(error)) return error;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (KeelError.isInstance(cause)) return cause;
  const message = (error as Error | undefined)?.message ?? String(error);
  if (message === STALLED_TOO_OFTEN) {
    return new KeelError(
      'policy.retries_exhausted',
      `Run ${runId} lost its worker more than maxStalls (${maxStalls}) times; it was given up`,
      { cause: error, data: { runId, maxStalls } },
    );
  }
  return new KeelError('internal.unexpected', `Run ${runId}: its job failed: ${message}`, {
    cause: error,
    data: { runId },
  });
}

/**
 * Ends a `queued` or `running` run whose job failed for good as `failed`, with `error` in its state, so that no run
 * waits forever for a job that will not come. Leaves it as it is when it has ended or is interrupted (it waits for a
 * human), or when a live lease holds it (its holder ends it). Resolves with whether it ended the run.
 */
export async function failRun(
  store: RunStore,
  runId: string,
  error: KeelError,
  nowMs: number,
): Promise<boolean> {
  const record = await store.loadRun(runId);
  if (record === undefined || (record.status !== 'queued' && record.status !== 'running')) return false;
  const owner = `keel-worker-failing:${randomUUID()}`;
  try {
    await store.acquireLease(runId, owner, 30_000, nowMs);
  } catch (refused) {
    if (KeelError.isInstance(refused) && refused.code === 'store.conflict') return false;
    throw refused;
  }
  try {
    await store.saveCheckpoint(runId, {
      expectedVersion: record.version,
      owner,
      status: 'failed',
      ...failedState(record, error, nowMs),
      nowMs,
    });
  } catch (refused) {
    // Moved on meanwhile (a cancellation, a worker that took it): whoever moved it ends it.
    if (KeelError.isInstance(refused) && refused.code === 'store.conflict') return false;
    throw refused;
  } finally {
    await store.releaseLease(runId, owner);
  }
  return true;
}

/** The run's state, ended as failed with `error`; a state this keel cannot read is kept as it is. */
function failedState(
  record: RunRecord,
  error: KeelError,
  nowMs: number,
): { state: JsonValue; schemaVersion: number } {
  const { schemaVersion } = record;
  const queued = readQueuedState(record.state);
  if (queued !== undefined) {
    const serialized = serializeError(error) as unknown as JsonValue;
    return {
      state: { ...(queued as unknown as Record<string, JsonValue>), error: serialized },
      schemaVersion,
    };
  }
  let state: ReturnType<typeof migrateRunState>;
  try {
    state = migrateRunState(record.state, record.runId);
  } catch {
    return { state: record.state, schemaVersion };
  }
  state.status = 'failed';
  state.phase = 'ended';
  state.pendingToolCalls = [];
  state.pendingDecisions = [];
  state.stopReason = 'internal_error';
  state.error = serializeError(error);
  state.endedAtMs = nowMs;
  return { state: state as unknown as JsonValue, schemaVersion: state.schemaVersion };
}
