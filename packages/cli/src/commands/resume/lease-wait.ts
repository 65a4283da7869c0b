import { hostname } from 'node:os';
import { type Clock, KeelError, sleep } from '@keel/core';

/** The longest `keel resume --wait` waits for another process's lease, in milliseconds: 10 minutes. */
export const MAX_LEASE_WAIT_MS = 600_000;
const PROGRESS_EVERY_MS = 5_000;
// Past the lease's expiry, so that a retry cannot land on the very millisecond it ends.
const EXPIRY_MARGIN_MS = 50;

/** A lease another process holds on a run, as a `store.conflict` from `acquireLease` reports it. */
export interface HeldLease {
  holder: string | null;
  expiresAtMs: number;
}

/** The lease behind `error`, when it is a `store.conflict` about one (not a version race). */
export function heldLease(error: unknown): HeldLease | undefined {
  if (!KeelError.isInstance(error) || error.code !== 'store.conflict') return undefined;
  const { holder, expiresAtMs } = error.data;
  if (typeof expiresAtMs !== 'number') return undefined;
  return { holder: typeof holder === 'string' ? holder : null, expiresAtMs };
}

/** `in 27 s, at 14:03:12` (local time). */
export function whenLeaseEnds(expiresAtMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.round((expiresAtMs - nowMs) / 1_000));
  return `in ${seconds} s, at ${new Date(expiresAtMs).toTimeString().slice(0, 8)}`;
}

/** The refusal of `keel resume` for a run another process holds, saying in words when its lease ends. */
export function leaseHeldError(
  runId: string,
  lease: HeldLease,
  nowMs: number,
  cause: unknown,
  problem = '',
): KeelError {
  return new KeelError(
    'store.conflict',
    `Run ${runId} is held by another process (lease owner ${lease.holder ?? 'unknown'}); its lease ends ${whenLeaseEnds(lease.expiresAtMs, nowMs)}${problem}`,
    {
      cause,
      retryAfterMs: Math.max(0, lease.expiresAtMs - nowMs),
      data: { runId, holder: lease.holder, expiresAtMs: lease.expiresAtMs },
      guidance:
        `If that process is still running, let it finish or stop it with keel cancel ${runId}; if it died, ` +
        `resume once its lease ends: keel resume ${runId} --wait`,
    },
  );
}

/** The refusal of `keel resume --wait` when the lease it waited for was renewed or taken: a live process runs it. */
export function leaseRenewedError(runId: string, lease: HeldLease, nowMs: number, cause: unknown): KeelError {
  return new KeelError(
    'store.conflict',
    `Run ${runId} is still held: its lease (owner ${lease.holder ?? 'unknown'}) was renewed while keel waited; it now ends ${whenLeaseEnds(lease.expiresAtMs, nowMs)}`,
    {
      cause,
      data: { runId, holder: lease.holder, expiresAtMs: lease.expiresAtMs },
      guidance: `A live process is running it: let it finish, or stop it with keel cancel ${runId}`,
    },
  );
}

/**
 * Waits on `clock` until just past `lease.expiresAtMs`, calling `progress` with a line every 5 s (how many seconds
 * are left). Rejects with the signal's reason when `signal` aborts (Ctrl-C).
 */
export async function waitForLease(
  lease: HeldLease,
  clock: Clock,
  signal: AbortSignal,
  progress: (line: string) => void,
): Promise<void> {
  const untilMs = lease.expiresAtMs + EXPIRY_MARGIN_MS;
  for (let leftMs = untilMs - clock.now(); leftMs > 0; leftMs = untilMs - clock.now()) {
    await sleep(Math.min(leftMs, PROGRESS_EVERY_MS), clock, signal);
    const remainingMs = untilMs - clock.now();
    if (remainingMs >= 1_000) progress(`  ${Math.round(remainingMs / 1_000)} s left`);
  }
}

/**
 * The process id of a lease holder that was a process of this host and is gone, or undefined. Lease owners are
 * `${hostname}:${pid}:${random}` (keel's default, and keel worker's): a holder of another host, of another form, or
 * whose process still exists (or may: any answer but ESRCH from `process.kill(pid, 0)`, which sends no signal) is
 * not dead as far as this host can tell.
 */
export function deadHolderOnThisHost(holder: string | null): number | undefined {
  const match = holder === null ? null : /^(.+):(\d+):([^:]+)$/.exec(holder);
  if (match === null || match[1] !== hostname()) return undefined;
  const pid = Number(match[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? pid : undefined;
  }
}
