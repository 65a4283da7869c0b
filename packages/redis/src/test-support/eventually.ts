// Waits for something that arrives over a real socket (a message, an answer sent without waiting): checks the
// condition after each turn of the event loop until it holds, and fails after `timeoutMs`.
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
