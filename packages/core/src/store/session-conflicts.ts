import { KeelError } from '../errors/keel-error.js';
import type { RunStatus, SessionAppend, SessionClaim, SessionConflictData } from '../spec/run-store.js';

// The checks every RunStore makes on sessions, inside its own transaction, so that all stores decide alike and say
// the same thing in the same words.

/** A session as a store's transaction reads it before a claim or an append. */
export interface SessionHead {
  readonly version: number;
  readonly activeRunId: string | null;
}

/** The run holding a session, as the claim's transaction reads it (undefined when it is not in the store). */
export interface SessionHolder {
  readonly status: RunStatus;
  /** Set while the holder has a lease. */
  readonly leaseExpiresAtMs?: number | null;
}

/**
 * Whether a run in `status` keeps holding its session: while it runs or waits (`running`, `interrupted`), and once
 * `completed` until its turns are appended. A run that `failed` or was `cancelled` has nothing to append.
 */
export function holdsSession(status: RunStatus): boolean {
  return status === 'running' || status === 'interrupted' || status === 'completed';
}

/**
 * Why `runId` may not claim the session (see `SessionClaim`), or undefined when it may. `head` is undefined for a
 * session not stored yet; `holder` is the run holding it, when another does.
 */
export function sessionClaimConflict(
  runId: string,
  claim: SessionClaim,
  head: SessionHead | undefined,
  holder: SessionHolder | undefined,
): KeelError | undefined {
  const actualVersion = head?.version ?? 0;
  const { sessionId, expectedVersion } = claim;
  if (actualVersion !== expectedVersion) {
    return conflict(
      `Session ${sessionId} is at version ${actualVersion}, not ${expectedVersion}: another run added turns since its conversation was loaded`,
      { sessionId, expectedVersion, actualVersion },
    );
  }
  const activeRunId = head?.activeRunId ?? null;
  if (activeRunId === null || activeRunId === runId || holder === undefined || !holdsSession(holder.status))
    return undefined;
  const data: SessionConflictData = { sessionId, activeRunId, activeRunStatus: holder.status };
  if (holder.leaseExpiresAtMs !== undefined && holder.leaseExpiresAtMs !== null)
    data.activeRunLeaseExpiresAtMs = Number(holder.leaseExpiresAtMs);
  return conflict(`Session ${sessionId} is held by run ${activeRunId} (${holder.status})`, data);
}

/**
 * Why the append of `append` to the session is refused, or undefined when it may go ahead. `head` is undefined for a
 * session that is not stored (`store.not_found`). (A turn already appended is found before this check.)
 */
export function sessionAppendConflict(
  sessionId: string,
  append: SessionAppend,
  head: SessionHead | undefined,
): KeelError | undefined {
  if (head === undefined) return sessionNotFound(sessionId);
  if (head.activeRunId !== append.runId) {
    return conflict(
      `Run ${append.runId} does not hold session ${sessionId}${head.activeRunId === null ? '' : ` (run ${head.activeRunId} does)`}`,
      {
        sessionId,
        ...(head.activeRunId === null ? {} : { activeRunId: head.activeRunId }),
      },
    );
  }
  if (head.version !== append.expectedVersion) {
    return conflict(`Session ${sessionId} is at version ${head.version}, not ${append.expectedVersion}`, {
      sessionId,
      expectedVersion: append.expectedVersion,
      actualVersion: head.version,
    });
  }
  return undefined;
}

/** `store.not_found` for a session the store does not hold. */
export function sessionNotFound(sessionId: string): KeelError {
  return new KeelError('store.not_found', `Session ${sessionId} does not exist`, { data: { sessionId } });
}

function conflict(message: string, data: SessionConflictData): KeelError {
  return new KeelError('store.conflict', message, { data: { ...data } });
}
