/**
 * Waits for `work` until `deadlineMs` (a `Date.now()` time) at the latest; resolves with whether it settled by then
 * (a rejection counts as settled and is swallowed). Redis calls with `maxRetriesPerRequest: null` wait for Redis
 * forever while it is down; shutting down and best-effort messages must not.
 */
export async function settlesBy(work: Promise<unknown>, deadlineMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadlineMs - Date.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
