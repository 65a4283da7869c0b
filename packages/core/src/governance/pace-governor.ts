import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';

/** What the governor knows of one provider/model's limits, from its last answer and the calls sent since. */
interface Window {
  requestsRemaining: number | undefined;
  requestsResetAtMs: number;
  tokensRemaining: number | undefined;
  tokensResetAtMs: number;
  /** No call before this moment: a 429's Retry-After, or the spacing of the calls left in the window. */
  nextAtMs: number;
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
    const window = this.windows.get(key);
    if (window === undefined) return 0;
    let startMs = Math.max(nowMs, window.nextAtMs);
    if (window.requestsRemaining !== undefined && startMs < window.requestsResetAtMs) {
      if (window.requestsRemaining <= 0) startMs = window.requestsResetAtMs;
      else {
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

  /** Takes in what an answer's headers said of `key`'s limits, its resets counted from `nowMs`. */
  observe(key: string, snapshot: RateLimitSnapshot | undefined, nowMs: number): void {
    if (snapshot === undefined) return;
    const window = this.windows.get(key) ?? {
      requestsRemaining: undefined,
      requestsResetAtMs: 0,
      tokensRemaining: undefined,
      tokensResetAtMs: 0,
      nextAtMs: 0,
    };
    if (snapshot.requestsRemaining !== undefined) {
      window.requestsRemaining = snapshot.requestsRemaining;
      window.requestsResetAtMs = nowMs + (snapshot.requestsResetInMs ?? 60_000);
    }
    if (snapshot.tokensRemaining !== undefined) {
      window.tokensRemaining = snapshot.tokensRemaining;
      window.tokensResetAtMs = nowMs + (snapshot.tokensResetInMs ?? 60_000);
    }
    this.windows.set(key, window);
  }

  /** A 429 asked callers of `key` to wait `retryAfterMs`: every call of this process waits for it. */
  refused(key: string, retryAfterMs: number, nowMs: number): void {
    const window = this.windows.get(key) ?? {
      requestsRemaining: undefined,
      requestsResetAtMs: 0,
      tokensRemaining: undefined,
      tokensResetAtMs: 0,
      nextAtMs: 0,
    };
    window.nextAtMs = Math.max(window.nextAtMs, nowMs + retryAfterMs);
    this.windows.set(key, window);
  }
}
