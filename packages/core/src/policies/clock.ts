/** An opaque timer handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = unknown;

/**
 * Where policies get time from. Tests pass a fake clock (see `@keel/core/testing`) instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `callback` once, `delayMs` milliseconds from now, and returns a handle for `clearTimeout`. Policies never
   * pass more than `MAX_DELAY_MS` (2^31 - 1), the longest a Node timer can wait, nor NaN.
   */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer from `setTimeout`, if it has not fired yet. A handle that already fired or was cleared is ignored. */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Optional: whether a pending timer keeps the process alive (`true`, as every timer does when set) or not (`false`),
   * without clearing it. A policy that serves many calls with one timer (a forced timeout) leaves it armed but idle
   * between calls rather than clearing and setting a timer for each; a clock without it has idle timers cleared.
   */
  keepAlive?(handle: TimerHandle, keepAlive: boolean): void;
}

/** The system clock: `Date.now` and the global timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
  keepAlive(handle, keepAlive) {
    const timer = handle as ReturnType<typeof setTimeout>;
    if (keepAlive) timer.ref();
    else timer.unref();
  },
};
