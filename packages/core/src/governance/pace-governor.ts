import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';

/** What the governor knows of one provider/model's limits, from its last answer and the calls sent since. */
interface Window {
  requestsRemaining: number | undefined;
  requestsResetAtMs: number;
  tokensRemaining: number | undefined;
  tokensResetAtMs: number;
  /** No call before this moment: a 429's Retry-After, or the spacing of the calls left in the window. */
  nextAtMs: number;
  /** Calls admitted whose answer has not come: an answer's `remaining` may not count them yet. */
  inFlight: number;
  /** The window's request limit, when the provider said it. */
  requestsLimit: number | undefined;
  /** The longest time to a reset seen: at most the window's length, the governor's guess of it. */
  windowMs: number;
}

function emptyWindow(): Window {
  return {
    requestsRemaining: undefined,
    requestsResetAtMs: 0,
    tokensRemaining: undefined,
    tokensResetAtMs: 0,
    nextAtMs: 0,
    inFlight: 0,
    requestsLimit: undefined,
    windowMs: 0,
  };
}

/**
 * Paces the calls of one process to each provider/model by what the provider said of its limits: the rate-limit
 * headers of every answer (`ModelResponse.rateLimit`) and the Retry-After of every 429. Local to the process (the
 * fleet-wide version through Redis is not built). A call waits when:
 *
 * - a 429 asked every caller to wait (until its Retry-After ends);
 * - the requests left in the window are spent, or too few tokens are left for the call's estimate (until the window
 *   resets);
 * - the requests left would run out before the window resets: calls are spaced evenly over what is left of it.
 *
 * A window whose reset has passed is forgotten: the next answer tells the new one.
 */
export class PaceGovernor {
  private readonly windows = new Map<string, Window>();

  /**
   * The wait, in milliseconds, before a call of `tokens` estimated tokens to `key` (`provider/model`) may be sent at
   * `nowMs`; the call is counted against the window as if sent then.
   */
  admit(key: string, tokens: number, nowMs: number): number {
    let window = this.windows.get(key);
    if (window === undefined) {
      window = emptyWindow();
      this.windows.set(key, window);
    }
    window.inFlight++;
    let startMs = Math.max(nowMs, window.nextAtMs);
    if (
      window.requestsRemaining !== undefined &&
      startMs >= window.requestsResetAtMs &&
      window.requestsLimit !== undefined &&
      window.windowMs > 0
    ) {
      // The window the last answer told of has ended: the next one (by the governor's guess of its length) starts
      // with the provider's limit, until an answer tells it.
      const passed = Math.floor((startMs - window.requestsResetAtMs) / window.windowMs) + 1;
      window.requestsResetAtMs += passed * window.windowMs;
      window.requestsRemaining = window.requestsLimit;
    }
    if (window.requestsRemaining !== undefined && startMs < window.requestsResetAtMs) {
      if (window.requestsRemaining <= 0) {
        // Spent: the call goes in the next window, which the governor opens itself (with the limit the provider
        // said) so that the calls waiting for it are spaced over it rather than sent together at its start.
        startMs = window.requestsResetAtMs;
        if (window.requestsLimit !== undefined && window.windowMs > 0) {
          window.requestsResetAtMs += window.windowMs;
          window.requestsRemaining = window.requestsLimit - 1;
          window.nextAtMs = startMs + window.windowMs / window.requestsLimit;
        }
      } else {
        const spacingMs = (window.requestsResetAtMs - startMs) / window.requestsRemaining;
        window.requestsRemaining--;
        window.nextAtMs = startMs + spacingMs;
      }
    }
    if (window.tokensRemaining !== undefined && startMs < window.tokensResetAtMs) {
      if (window.tokensRemaining < tokens) startMs = Math.max(startMs, window.tokensResetAtMs);
      else window.tokensRemaining -= tokens;
    }
    return Math.max(0, Math.ceil(startMs - nowMs));
  }

  /**
   * An admitted call of `key` ended: its answer's headers (`snapshot`, when it came with any) say what is left of the
   * limits, resets counted from `nowMs`. The calls still in flight are taken off what the answer says is left (it may
   * not count them yet): the governor errs towards waiting.
   */
  observe(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): void {
    const window = this.windows.get(key) ?? emptyWindow();
    window.inFlight = Math.max(0, window.inFlight - 1);
    this.windows.set(key, window);
    if (snapshot === undefined) return;
    if (snapshot.requestsRemaining !== undefined) {
      window.requestsRemaining = Math.max(0, snapshot.requestsRemaining - window.inFlight);
      window.requestsResetAtMs = nowMs + (snapshot.requestsResetInMs ?? 60_000);
      window.windowMs = Math.max(window.windowMs, snapshot.requestsResetInMs ?? 0);
      if (snapshot.requestsLimit !== undefined) window.requestsLimit = snapshot.requestsLimit;
    }
    if (snapshot.tokensRemaining !== undefined) {
      window.tokensRemaining = snapshot.tokensRemaining;
      window.tokensResetAtMs = nowMs + (snapshot.tokensResetInMs ?? 60_000);
    }
  }

  /** A 429 asked callers of `key` to wait `retryAfterMs`: every call of this process waits for it. */
  refused(key: string, retryAfterMs: number, nowMs: number): void {
    const window = this.windows.get(key) ?? emptyWindow();
    window.nextAtMs = Math.max(window.nextAtMs, nowMs + retryAfterMs);
    this.windows.set(key, window);
  }
}
