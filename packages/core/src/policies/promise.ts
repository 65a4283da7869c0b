/** Whether `value` is a promise or any thenable, which must be awaited; anything else is a value ready now. */
export function isPromiseLike<T>(value: PromiseLike<T> | T): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** A rejection handler that drops the reason: for promises whose outcome nobody waits for any more. */
export function ignoreRejection(): void {}
