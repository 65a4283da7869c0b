import type { Clock, JsonValue } from '@keel/core';

/**
 * A provider's rate limits, enforced per API key (the `authorization` header; requests without one share a key):
 * fixed windows of `windowMs` (60_000 for real per-minute limits; scale it down to run a test in seconds), each
 * allowing `requestsPerWindow` requests and `tokensPerWindow` tokens (the prompt as the server counts it, plus the
 * request's `max_tokens`, or 0, as OpenAI reserves them). A request past either is answered 429 with OpenAI's headers
 * (`retry-after-ms`, `x-ratelimit-*`), and every answer carries `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`.
 */
export interface SimulatedQuota {
  readonly requestsPerWindow: number;
  readonly tokensPerWindow: number;
  /** Defaults to 60_000 (per minute). */
  readonly windowMs?: number;
}

/** What {@link QuotaWindows.take} decided: the headers to send, and whether the request is refused. */
export interface QuotaDecision {
  readonly refused: boolean;
  readonly retryAfterMs: number;
  readonly headers: Record<string, string>;
}

/** The windows of every key. */
export class QuotaWindows {
  private readonly windows = new Map<string, { startMs: number; requests: number; tokens: number }>();
  private readonly windowMs: number;

  constructor(
    private readonly quota: SimulatedQuota,
    private readonly clock: Clock,
  ) {
    this.windowMs = quota.windowMs ?? 60_000;
  }

  /** Counts a request of `tokens` for `key` when its window allows it, and says what to answer. */
  take(key: string, tokens: number): QuotaDecision {
    const nowMs = this.clock.now();
    const startMs = Math.floor(nowMs / this.windowMs) * this.windowMs;
    let window = this.windows.get(key);
    if (window === undefined || window.startMs !== startMs) {
      window = { startMs, requests: 0, tokens: 0 };
      this.windows.set(key, window);
    }
    const resetMs = Math.max(1, startMs + this.windowMs - nowMs);
    const refused =
      window.requests + 1 > this.quota.requestsPerWindow ||
      window.tokens + tokens > this.quota.tokensPerWindow;
    if (!refused) {
      window.requests++;
      window.tokens += tokens;
    }
    const headers: Record<string, string> = {
      'x-ratelimit-limit-requests': String(this.quota.requestsPerWindow),
      'x-ratelimit-remaining-requests': String(Math.max(0, this.quota.requestsPerWindow - window.requests)),
      'x-ratelimit-reset-requests': `${resetMs}ms`,
      'x-ratelimit-limit-tokens': String(this.quota.tokensPerWindow),
      'x-ratelimit-remaining-tokens': String(Math.max(0, this.quota.tokensPerWindow - window.tokens)),
      'x-ratelimit-reset-tokens': `${resetMs}ms`,
    };
    if (refused) headers['retry-after-ms'] = String(resetMs);
    return { refused, retryAfterMs: resetMs, headers };
  }
}

/** The request's `max_tokens` (or `max_completion_tokens`), 0 when absent: what a quota reserves for the answer. */
export function maxTokensOf(body: JsonValue): number {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 0;
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
