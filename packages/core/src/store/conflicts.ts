import { KeelError } from '../errors/keel-error.js';

// The errors every RunStore throws when a conditional write finds the run in another state than it expected, so that
// all stores say the same thing in the same words.

/** `store.not_found` for a run the store does not hold. */
export function runNotFound(runId: string): KeelError {
  return new KeelError('store.not_found', `Run ${runId} does not exist`, { data: { runId } });
}

/**
 * Why a checkpoint was refused, from the run's lease holder and version as they are now (`current`; undefined when
 * the run does not exist): `store.not_found`, or `store.conflict` saying whether the lease or the version moved.
 */
export function checkpointConflict(
  runId: string,
  checkpoint: { readonly owner: string; readonly expectedVersion: number },
  current: { readonly leaseOwner: string | null; readonly version: number } | undefined,
): KeelError {
  if (current === undefined) return runNotFound(runId);
  if (current.leaseOwner !== checkpoint.owner) {
    return new KeelError('store.conflict', `Run ${runId} is not leased by ${checkpoint.owner}`, {
      data: { runId, owner: checkpoint.owner, holder: current.leaseOwner },
    });
  }
  return new KeelError(
    'store.conflict',
    `Run ${runId} is at version ${current.version}, not ${checkpoint.expectedVersion}`,
    { data: { runId, expectedVersion: checkpoint.expectedVersion, actualVersion: current.version } },
  );
}

/**
 * Why a lease was refused, from its holder as it is now (`current`; undefined when the run does not exist):
 * `store.not_found`, or `store.conflict` with `retryAfterMs` until the holder's lease expires.
 */
export function leaseConflict(
  runId: string,
  current: { readonly holder: string | null; readonly expiresAtMs: number } | undefined,
  nowMs: number,
): KeelError {
  if (current === undefined) return runNotFound(runId);
  return new KeelError(
    'store.conflict',
    `Run ${runId} is leased by another process until ${current.expiresAtMs}`,
    {
      data: { runId, holder: current.holder, expiresAtMs: current.expiresAtMs },
      retryAfterMs: Math.max(0, current.expiresAtMs - nowMs),
    },
  );
}

/** `store.not_found` for a ledger completion of a call that was never recorded as started. */
export function toolCallNotStarted(runId: string, idempotencyKey: string): KeelError {
  return new KeelError('store.not_found', `No started tool call ${idempotencyKey} in run ${runId}`, {
    data: { runId, idempotencyKey },
  });
}

/**
 * `store.invalid` for a message log write that would leave a gap: it starts past the messages the log holds
 * (`storedCount`, 0 for a run whose messages are inline). Nothing is written.
 */
export function messageLogGap(runId: string, start: number, storedCount: number): KeelError {
  return new KeelError(
    'store.invalid',
    `Run ${runId}: a message log write starts at message ${start}, but the log holds ${storedCount}`,
    {
      data: { runId, start, storedCount },
      guidance: 'Write from the stored count (RunRecord.messageCount) or before it, never past it',
    },
  );
}
