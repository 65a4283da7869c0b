import type { Clock } from '../../policies/clock.js';

// Runs of this process that wait for a session held by another run. A run that lets go of a session here wakes them at
// once; runs of other processes are found by polling.
const waiters = new Map<string, Set<() => void>>();

/** Wakes the runs of this process waiting for `sessionId`. */
export function wakeSessionWaiters(sessionId: string): void {
  const waiting = waiters.get(sessionId);
  if (waiting === undefined) return;
  waiters.delete(sessionId);
  for (const wake of waiting) wake();
}

/**
 * Waits `delayMs` on `clock`, or less if a run of this process lets go of `sessionId` first. Rejects with the
 * signal's reason when it aborts; the timer and the listeners are removed either way.
 */
export function waitForSession(
  sessionId: string,
  delayMs: number,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    let waiting = waiters.get(sessionId);
    if (waiting === undefined) {
      waiting = new Set();
      waiters.set(sessionId, waiting);
    }
    const set = waiting;
    const done = () => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      set.delete(wake);
      if (set.size === 0 && waiters.get(sessionId) === set) waiters.delete(sessionId);
    };
    const wake = () => {
      done();
      resolve();
    };
    const onAbort = () => {
      done();
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(wake, Math.max(0, delayMs));
    set.add(wake);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
