import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';

/** One model call asking the pace governor for its turn (see {@link PaceStore}). */
export interface PaceRequest {
  /** The window the call counts against: `provider/model/keyName` (a name for the API key, never the key itself). */
  readonly key: string;
  /**
   * Identifies the call while it waits, so that it keeps its place when it asks again: unique per call attempt (keel
   * uses a zero-padded counter of the process and the run id). Of two calls that first asked in the same millisecond,
   * the smaller id is first in line.
   */
  readonly callId: string;
  /** The call's estimated tokens: its prompt's estimate plus its output limit. */
  readonly tokens: number;
  /** The caller's time, in milliseconds since the epoch: every process of a fleet passes its own clock's. */
  readonly nowMs: number;
  /** The run's tenant (the run option `tenant`); `default` for a run with none. */
  readonly tenant: string;
  /** The run's priority (the run option `priority`): an integer from -10 to 10, higher first; 0 by default. */
  readonly priority: number;
}

/**
 * Where the pace governor keeps its windows: in this process's memory (`memoryPaceStore()`, what `pace: true` uses) or
 * in Redis for a fleet (`@keel/redis`'s `paceStore()`), where every process paces against one window per
 * provider/model/key. Each operation is atomic (one Lua script call in Redis: one round trip).
 *
 * The rule, the same in every store: a call waits while a 429's Retry-After runs, while the window's requests (or
 * tokens, for the call's estimate) are spent, and for its turn when the requests left are spread evenly over what is
 * left of the window. When calls wait for a slot, the slot goes, in this order, to the highest `priority` waiting; among
 * equals, to the tenant served least recently (so tenants with waiting calls take the window's slots in turns, an
 * equal share each, and a tenant alone takes them all); within a tenant, to the call waiting longest.
 */
export interface PaceStore {
  /**
   * Asks for the call's turn. Resolves to 0 when the call may be sent now: it is counted as sent. Otherwise resolves to
   * the wait, in milliseconds, after which the caller asks again with the same `callId` (the call keeps its place
   * meanwhile; a call that never asks again loses it a second after it was due). Rejects when the store cannot answer.
   */
  admit(request: PaceRequest): Promise<number>;
  /**
   * A call admitted for `key` ended: `snapshot` is what its answer's rate-limit headers said (undefined for none, or
   * for a failure), resets counted from `nowMs`. Calls still in flight are taken off what the answer says is left.
   */
  observe(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): Promise<void>;
  /** A 429 asked callers of `key` to wait `retryAfterMs` from `nowMs`: no call of `key` is admitted before. */
  refused(key: string, retryAfterMs: number, nowMs: number): Promise<void>;
}
