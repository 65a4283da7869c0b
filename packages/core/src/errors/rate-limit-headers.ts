import { type HeadersLike, parseDurationMs, parseTimestamp, readHeader } from './retry-after.js';

/**
 * What a provider said of its rate limits in one response's headers: requests and tokens left in the current window,
 * and in how many milliseconds each window resets (relative, so that a reader on any clock, a fake one included,
 * places the reset on its own). Each field is absent when the
 * provider did not send it. OpenAI sends `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as
 * durations: `1s`, `6m0s`); Anthropic `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` (resets as RFC
 * 3339 timestamps).
 */
export interface RateLimitSnapshot {
  readonly requestsLimit?: number;
  readonly requestsRemaining?: number;
  readonly requestsResetInMs?: number;
  readonly tokensLimit?: number;
  readonly tokensRemaining?: number;
  readonly tokensResetInMs?: number;
}

const WIRES = [
  {
    prefix: 'x-ratelimit-',
    name: (field: string, kind: string) => `x-ratelimit-${field}-${kind}`,
    reset: 'duration',
  },
  {
    prefix: 'anthropic-ratelimit-',
    name: (field: string, kind: string) => `anthropic-ratelimit-${kind}-${field}`,
    reset: 'timestamp',
  },
] as const;

/**
 * The rate-limit snapshot in `headers` (see {@link RateLimitSnapshot}), or undefined when they hold none. Garbage
 * values are left out.
 *
 * @param nowMs The current time, for Anthropic's reset timestamps. Defaults to `Date.now()`.
 */
export function rateLimitFromHeaders(
  headers: HeadersLike | null | undefined,
  nowMs: number = Date.now(),
): RateLimitSnapshot | undefined {
  if (headers === null || headers === undefined || typeof headers !== 'object') return undefined;
  const snapshot: Record<string, number> = {};
  for (const wire of WIRES) {
    for (const kind of ['requests', 'tokens'] as const) {
      const limit = count(readHeader(headers, wire.name('limit', kind)));
      const remaining = count(readHeader(headers, wire.name('remaining', kind)));
      const resetText = readHeader(headers, wire.name('reset', kind));
      const resetInMs =
        resetText === undefined
          ? undefined
          : wire.reset === 'duration'
            ? parseDurationMs(resetText)
            : parseTimestamp(resetText, nowMs);
      if (limit !== undefined) snapshot[`${kind}Limit`] ??= limit;
      if (remaining !== undefined) snapshot[`${kind}Remaining`] ??= remaining;
      if (resetInMs !== undefined) snapshot[`${kind}ResetInMs`] ??= resetInMs;
    }
  }
  return Object.keys(snapshot).length === 0 ? undefined : (snapshot as RateLimitSnapshot);
}

function count(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}
