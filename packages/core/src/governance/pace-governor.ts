import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';
import type { PaceRequest, PaceStore } from './pace-store.js';

/**
 * How long a waiting call keeps its place after the moment it was told to ask again, in milliseconds: a call whose run
 * was cancelled (or whose process died) stops holding back the others after this. `@keel/redis`'s script uses the same.
 */
export const PACE_CLAIM_GRACE_MS = 1_000;

/**
 * The longest a call admitted counts as in flight, in milliseconds: 120_000 (2 minutes). A call whose answer the
 * governor never hears (its `observe` was never made) stops lowering what is thought left after this, rather than for
 * the process's life. `@keel/redis`'s script uses the same (there: a process killed mid-call, an admit timed out on
 * the client after Redis ran it, a failed `observe`).
 */
export const PACE_MAX_CALL_MS = 120_000;

/** What the governor knows of one provider/model/key's limits, from its last answer and the calls sent since. */
interface Window {
  requestsRemaining: number | undefined;
  requestsResetAtMs: number;
  tokensRemaining: number | undefined;
  tokensResetAtMs: number;
  /** No call before this moment: a 429's Retry-After, or the spacing of the calls left in the window. */
  nextAtMs: number;
  /**
   * When each call admitted whose answer has not come was admitted, oldest first: an answer's `remaining` may not
   * count them yet. An answer takes the oldest off (the count matters, not which call); one older than
   * {@link PACE_MAX_CALL_MS} stops counting.
   */
  readonly inFlightSinceMs: number[];
  /** The window's request limit, when the provider said it. */
  requestsLimit: number | undefined;
  /** The longest time to a reset seen: at most the window's length, the governor's guess of it. */
  windowMs: number;
  /** Calls admitted so far: the tenants' turns are told by it. */
  served: number;
  /** Calls waiting for a slot, by call id. */
  readonly claims: Map<string, Claim>;
  /** The `served` count at each tenant's last admitted call. */
  readonly lastServed: Map<string, number>;
}

interface Claim {
  readonly tenant: string;
  readonly priority: number;
  /** When the call first asked. */
  readonly sinceMs: number;
  /** When it loses its place unless it asks again. */
  expiresAtMs: number;
}

function emptyWindow(): Window {
  return {
    requestsRemaining: undefined,
    requestsResetAtMs: 0,
    tokensRemaining: undefined,
    tokensResetAtMs: 0,
    nextAtMs: 0,
    inFlightSinceMs: [],
    requestsLimit: undefined,
    windowMs: 0,
    served: 0,
    claims: new Map(),
    lastServed: new Map(),
  };
}

/**
 * A window whose reset has passed: the next one (by the governor's guess of its length) starts with the provider's
 * limit, or, with no limit known, is forgotten until an answer tells it.
 */
function roll(window: Window, nowMs: number): void {
  if (window.requestsRemaining !== undefined && nowMs >= window.requestsResetAtMs) {
    if (window.requestsLimit !== undefined && window.windowMs > 0) {
      const passed = Math.floor((nowMs - window.requestsResetAtMs) / window.windowMs) + 1;
      window.requestsResetAtMs += passed * window.windowMs;
      window.requestsRemaining = window.requestsLimit;
    } else {
      window.requestsRemaining = undefined;
    }
  }
  if (window.tokensRemaining !== undefined && nowMs >= window.tokensResetAtMs)
    window.tokensRemaining = undefined;
}

/** The calls in flight at `nowMs`, once those admitted {@link PACE_MAX_CALL_MS} ago or more stopped counting. */
function inFlightAt(window: Window, nowMs: number): number {
  const since = window.inFlightSinceMs;
  let lapsed = 0;
  while (lapsed < since.length && since[lapsed]! <= nowMs - PACE_MAX_CALL_MS) lapsed++;
  if (lapsed > 0) since.splice(0, lapsed);
  return since.length;
}

/** The first moment a call of `tokens` may go, by the window alone. */
function readyAtMs(window: Window, tokens: number, nowMs: number): number {
  let readyMs = Math.max(nowMs, window.nextAtMs);
  if (window.requestsRemaining !== undefined && window.requestsRemaining <= 0) {
    readyMs = Math.max(readyMs, window.requestsResetAtMs);
  }
  if (window.tokensRemaining !== undefined && window.tokensRemaining < tokens) {
    readyMs = Math.max(readyMs, window.tokensResetAtMs);
  }
  return readyMs;
}

/** Whether the call `a` goes before `b`: higher priority, then the tenant served least recently, then the older. */
function goesBefore(
  a: { priority: number; served: number; sinceMs: number; callId: string },
  b: { priority: number; served: number; sinceMs: number; callId: string },
): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.served !== b.served) return a.served < b.served;
  if (a.sinceMs !== b.sinceMs) return a.sinceMs < b.sinceMs;
  return a.callId < b.callId;
}

/**
 * The pace governor of one process: its windows in memory (see {@link PaceStore} for the rule). Every operation runs
 * to its end without yielding, so it is atomic for the process's runs. What `pace: true` uses, and what an agent with
 * a shared store falls back to while that store cannot answer.
 */
export class PaceGovernor implements PaceStore {
  private readonly windows = new Map<string, Window>();

  /** As {@link PaceStore.admit}, synchronously. */
  admitNow(request: PaceRequest): number {
    const { key, callId, tokens, nowMs, tenant, priority } = request;
    const window = this.windowOf(key);
    roll(window, nowMs);
    for (const [id, claim] of window.claims) if (claim.expiresAtMs <= nowMs) window.claims.delete(id);
    const own = window.claims.get(callId);
    const sinceMs = own?.sinceMs ?? nowMs;
    const claim = (waitMs: number): number => {
      window.claims.set(callId, {
        tenant,
        priority,
        sinceMs,
        expiresAtMs: nowMs + waitMs + PACE_CLAIM_GRACE_MS,
      });
      return waitMs;
    };
    const readyMs = readyAtMs(window, tokens, nowMs);
    if (readyMs > nowMs) return claim(Math.ceil(readyMs - nowMs));
    if (window.requestsRemaining !== undefined) {
      // Slots are counted: the slot goes to the call first in line, which may be another one, waiting. A call behind
      // others asks again about when its turn should come (a slot per call ahead of it), not at every slot.
      const self = { priority, served: window.lastServed.get(tenant) ?? 0, sinceMs, callId };
      let ahead = 0;
      for (const [id, other] of window.claims) {
        if (id === callId) continue;
        const candidate = { ...other, served: window.lastServed.get(other.tenant) ?? 0, callId: id };
        if (goesBefore(candidate, self)) ahead++;
      }
      if (ahead > 0) {
        const spacingMs = (window.requestsResetAtMs - nowMs) / Math.max(1, window.requestsRemaining);
        return claim(Math.max(1, Math.ceil(spacingMs * ahead)));
      }
    }
    window.claims.delete(callId);
    inFlightAt(window, nowMs);
    window.inFlightSinceMs.push(nowMs);
    window.served++;
    window.lastServed.set(tenant, window.served);
    if (window.requestsRemaining !== undefined) {
      const spacingMs = (window.requestsResetAtMs - nowMs) / window.requestsRemaining;
      window.requestsRemaining--;
      window.nextAtMs = nowMs + spacingMs;
    }
    if (window.tokensRemaining !== undefined) window.tokensRemaining -= tokens;
    return 0;
  }

  /** As {@link PaceStore.observe}, synchronously. */
  observeNow(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): void {
    const window = this.windowOf(key);
    inFlightAt(window, nowMs);
    window.inFlightSinceMs.shift();
    if (snapshot !== undefined) this.learn(key, snapshot, nowMs);
  }

  /**
   * What an answer for `key` said of the limits, for a call this governor did not admit (a shared store did): the
   * window is learnt, so that calls paced here while the shared store cannot answer know it.
   */
  learn(key: string, snapshot: RateLimitSnapshot, nowMs: number): void {
    const window = this.windowOf(key);
    if (snapshot.requestsRemaining !== undefined) {
      window.requestsRemaining = Math.max(0, snapshot.requestsRemaining - inFlightAt(window, nowMs));
      window.requestsResetAtMs = nowMs + (snapshot.requestsResetInMs ?? 60_000);
      window.windowMs = Math.max(window.windowMs, snapshot.requestsResetInMs ?? 0);
      if (snapshot.requestsLimit !== undefined) window.requestsLimit = snapshot.requestsLimit;
    }
    if (snapshot.tokensRemaining !== undefined) {
      window.tokensRemaining = snapshot.tokensRemaining;
      window.tokensResetAtMs = nowMs + (snapshot.tokensResetInMs ?? 60_000);
    }
  }

  /** As {@link PaceStore.refused}, synchronously. */
  refusedNow(key: string, retryAfterMs: number, nowMs: number): void {
    const window = this.windowOf(key);
    window.nextAtMs = Math.max(window.nextAtMs, nowMs + retryAfterMs);
  }

  admit(request: PaceRequest): Promise<number> {
    return Promise.resolve(this.admitNow(request));
  }

  observe(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): Promise<void> {
    this.observeNow(key, snapshot, nowMs);
    return Promise.resolve();
  }

  refused(key: string, retryAfterMs: number, nowMs: number): Promise<void> {
    this.refusedNow(key, retryAfterMs, nowMs);
    return Promise.resolve();
  }

  private windowOf(key: string): Window {
    let window = this.windows.get(key);
    if (window === undefined) {
      window = emptyWindow();
      this.windows.set(key, window);
    }
    return window;
  }
}

/**
 * A pace store in this process's memory: the runs of every agent given it pace together (`pace: { store }`); each agent
 * with `pace: true` has one of its own. See {@link PaceStore} for the rule.
 *
 * @example
 *   const pace = memoryPaceStore();
 *   const writer = agent({ model, pace: { store: pace } });
 *   const reviewer = agent({ model, pace: { store: pace } });
 */
export function memoryPaceStore(): PaceStore {
  return new PaceGovernor();
}
