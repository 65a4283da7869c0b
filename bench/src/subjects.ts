// The functions the policies run. The same function objects are handed to keel and to its peers.

/** What every successful call resolves with. */
export const VALUE = Object.freeze({ ok: true });

/** The baseline: an async function that returns at once and never looks at its context. */
export const bare = async (): Promise<typeof VALUE> => VALUE;

/**
 * A function that reads its signal, as a real call does when it hands the signal to `fetch` or an SDK. With keel this
 * makes the lazy signal real (an AbortController, and for a timeout its timer); peers create theirs on every call.
 */
export const readsSignal = async (context: { readonly signal: AbortSignal }): Promise<typeof VALUE> => {
  if (context.signal.aborted) throw context.signal.reason;
  return VALUE;
};

/** Like {@link readsSignal}, and also subscribes to the signal for the call's duration, as `fetch` does. */
export const listensToSignal = async (context: { readonly signal: AbortSignal }): Promise<typeof VALUE> => {
  const signal = context.signal;
  const onAbort = (): void => {};
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal.aborted) throw signal.reason;
    return VALUE;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
};

/** Fails every time: used to open breakers before their reject path is measured. */
export const failing = async (): Promise<never> => {
  throw new Error('dependency down');
};
