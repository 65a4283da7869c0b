import type { Clock } from './clock.js';

/**
 * Waits `delayMs` on `clock`. An abort before or during the wait rejects at once with the signal's reason, and the
 * timer and listener are removed either way. A delay of 0 or less waits for nothing: no timer, no listener, with or
 * without a signal.
 */
export function sleep(delayMs: number, clock: Clock, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (delayMs <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
