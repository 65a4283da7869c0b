/**
 * Whether `value` is a promise or any thenable, which must be awaited; anything else is a value ready now. A value
 * whose `then` cannot be read (a revoked proxy, a throwing getter) counts as ready: `Promise.resolve` then rejects
 * with what reading it threw, as awaiting it would.
 */
export function isPromiseLike<T>(value: PromiseLike<T> | T): value is PromiseLike<T> {
  try {
    return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
  } catch {
    return false;
  }
}

/** A rejection handler that drops the reason: for promises whose outcome nobody waits for any more. */
export function ignoreRejection(): void {}
