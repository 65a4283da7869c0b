import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';
import type { ResolvedPace } from './pace-options.js';
import type { PaceRequest, PaceStore } from './pace-store.js';

/** What {@link awaitPaceTurn} needs besides the call. */
export interface PaceTurnContext {
  /** The caller's time, in milliseconds. */
  now(): number;
  /** Waits `delayMs` (rejects when the run is aborted meanwhile). */
  sleep(delayMs: number): Promise<void>;
  /** The shared store could not answer: this call is paced by the agent's local governor. */
  onStoreUnavailable(error: unknown): void;
}

/** A call that had its turn: tell the store that admitted it how the call ended. */
export interface PaceTurn {
  ended(snapshot: RateLimitSnapshot | undefined): Promise<void>;
  refused(retryAfterMs: number): Promise<void>;
}

/**
 * Waits for the call's turn: asks the store (again after each wait it is told) until it is admitted. When a shared
 * store cannot answer, the call is paced by the agent's local governor instead, and the caller is told
 * (`onStoreUnavailable`): pacing is a protection, not a budget, so the call is not refused for it. The local governor
 * also hears every answer, so that it knows the window when it is needed.
 */
export async function awaitPaceTurn(
  pace: ResolvedPace,
  request: Omit<PaceRequest, 'nowMs'>,
  context: PaceTurnContext,
): Promise<PaceTurn> {
  const { local } = pace;
  let store: PaceStore = pace.store;
  for (;;) {
    const nowMs = context.now();
    let waitMs: number;
    if (store === local) {
      waitMs = local.admitNow({ ...request, nowMs });
    } else {
      try {
        waitMs = await store.admit({ ...request, nowMs });
      } catch (error) {
        context.onStoreUnavailable(error);
        store = local;
        continue;
      }
    }
    // Anything but a positive wait (0, or a store's garbage) lets the call go: pacing must never hold a call forever.
    if (!(waitMs > 0)) break;
    await context.sleep(waitMs);
  }
  const { key } = request;
  const shared = store === local ? undefined : store;
  return {
    async ended(snapshot) {
      if (shared === undefined) {
        local.observeNow(key, snapshot, context.now());
        return;
      }
      // The local governor learns the window too, without counting the call it did not admit.
      if (snapshot !== undefined) local.learn(key, snapshot, context.now());
      await shared.observe(key, snapshot, context.now()).catch(() => undefined);
    },
    async refused(retryAfterMs) {
      local.refusedNow(key, retryAfterMs, context.now());
      if (shared !== undefined) await shared.refused(key, retryAfterMs, context.now()).catch(() => undefined);
    },
  };
}
