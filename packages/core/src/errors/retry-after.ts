/**
 * The longest wait taken from a response's headers: one hour. A larger value (a daily quota reset, an epoch
 * timestamp sent where seconds were expected) is clamped to it, so a retry policy never sleeps for days on a
 * header's word; the policy's own maximum delay then decides whether waiting that long is worth it.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Response headers in any of the shapes users meet: a fetch `Headers` object (anything with `get`), or a plain
 * record such as Node's `IncomingHttpHeaders` or the `headers` of an `openai` v4 error (names in any case, values
 * strings, string arrays or numbers).
 */
export type HeadersLike =
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | readonly string[] | number | null | undefined>>;

// Reset headers and the `remaining` header saying whether that limit is the one that ran out.
const RESET_HEADERS: readonly (readonly [
  reset: string,
  remaining: string,
  format: 'duration' | 'timestamp',
])[] = [
  ['x-ratelimit-reset-requests', 'x-ratelimit-remaining-requests', 'duration'],
  ['x-ratelimit-reset-tokens', 'x-ratelimit-remaining-tokens', 'duration'],
  ['anthropic-ratelimit-requests-reset', 'anthropic-ratelimit-requests-remaining', 'timestamp'],
  ['anthropic-ratelimit-tokens-reset', 'anthropic-ratelimit-tokens-remaining', 'timestamp'],
  ['anthropic-ratelimit-input-tokens-reset', 'anthropic-ratelimit-input-tokens-remaining', 'timestamp'],
  ['anthropic-ratelimit-output-tokens-reset', 'anthropic-ratelimit-output-tokens-remaining', 'timestamp'],
];

/**
 * How long the server asked us to wait, in milliseconds. The first header that says something usable decides, in the
 * order the official OpenAI and Anthropic SDKs read them:
 *
 * 1. `retry-after-ms`: milliseconds.
 * 2. `retry-after`: seconds (possibly fractional) or an HTTP-date.
 * 3. Only when neither is there: the reset headers of the limits that ran out, OpenAI's `x-ratelimit-reset-requests`
 *    / `-tokens` (durations such as `6m0s`, `20ms`, `1h2m3.5s`) and Anthropic's `anthropic-ratelimit-*-reset`
 *    (RFC 3339 timestamps). A reset counts only when its limit's `remaining` header says `0`: a limit with room left
 *    (or one the server did not say ran out) is not what refused the request, and its reset can be minutes away
 *    while the refusal lasts a second. When several limits ran out, the latest reset wins: all must reset before a
 *    request can pass.
 *
 * Garbage and negative values are ignored (the next header decides), dates in the past mean 0, and the result is
 * clamped to {@link MAX_RETRY_AFTER_MS}. Undefined when no header says anything usable.
 *
 * @param nowMs The current time for HTTP-dates and timestamps, in milliseconds since the epoch. Defaults to `Date.now()`.
 * @example
 *   retryAfterFromHeaders(response.headers); // 2000 for `retry-after: 2`
 */
export function retryAfterFromHeaders(
  headers: HeadersLike | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (headers === null || headers === undefined || typeof headers !== 'object') return undefined;
  const asked =
    parseMilliseconds(readHeader(headers, 'retry-after-ms')) ??
    parseRetryAfter(readHeader(headers, 'retry-after'), nowMs) ??
    latestExhaustedReset(headers, nowMs);
  return asked === undefined ? undefined : Math.min(asked, MAX_RETRY_AFTER_MS);
}

/** The latest reset among the limits whose `remaining` header is 0, or undefined when none ran out. */
function latestExhaustedReset(headers: HeadersLike, nowMs: number): number | undefined {
  let latest: number | undefined;
  for (const [resetName, remainingName, format] of RESET_HEADERS) {
    const remaining = readHeader(headers, remainingName);
    if (remaining === undefined || !/^0+$/.test(remaining)) continue;
    const reset = readHeader(headers, resetName);
    if (reset === undefined) continue;
    const waitMs = format === 'duration' ? parseDurationMs(reset) : parseTimestamp(reset, nowMs);
    if (waitMs !== undefined && (latest === undefined || waitMs > latest)) latest = waitMs;
  }
  return latest;
}

/** Reads one header, case-insensitively, from either headers shape. The first value of a repeated header wins. */
export function readHeader(headers: HeadersLike, name: string): string | undefined {
  try {
    if (typeof (headers as { get?: unknown }).get === 'function') {
      const value = (headers as { get(name: string): unknown }).get(name);
      return typeof value === 'string' ? value.trim() : undefined;
    }
    const record = headers as Record<string, unknown>;
    const key = Object.hasOwn(record, name)
      ? name
      : Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
    if (key === undefined) return undefined;
    const value = record[key];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') return first.trim();
    if (typeof first === 'number' && Number.isFinite(first)) return String(first);
    return undefined;
  } catch {
    return undefined;
  }
}

const DECIMAL = /^\d+(?:\.\d+)?$/;
const DAY_NAME = /^(?:mon|tue|wed|thu|fri|sat|sun)/i;
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/gy;
const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000_001,
};

/** `retry-after-ms`: a non-negative number of milliseconds. */
function parseMilliseconds(value: string | undefined): number | undefined {
  if (value === undefined || !DECIMAL.test(value)) return undefined;
  return Math.ceil(Number(value));
}

/** `retry-after`: non-negative (possibly fractional) seconds, or an HTTP-date (all three forms start with a day). */
function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  if (DECIMAL.test(value)) return Math.ceil(Number(value) * 1000);
  if (!DAY_NAME.test(value)) return undefined;
  const dateMs = Date.parse(value);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, Math.ceil(dateMs - nowMs));
}

/**
 * A Go-style duration as OpenAI sends it (`6m0s`, `1s`, `20ms`, `1h2m3.5s`), in milliseconds; a bare number is
 * taken as seconds. Undefined for anything else.
 */
export function parseDurationMs(value: string): number | undefined {
  const text = value.trim();
  if (DECIMAL.test(text)) return Math.ceil(Number(text) * 1000);
  if (text === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  let consumed = 0;
  for (let match = DURATION_PART.exec(text); match !== null; match = DURATION_PART.exec(text)) {
    total += Number(match[1]) * DURATION_UNIT_MS[match[2]!]!;
    consumed = DURATION_PART.lastIndex;
  }
  return consumed === text.length ? Math.ceil(total) : undefined;
}

/** An RFC 3339 timestamp, as milliseconds from `nowMs` (0 when it has passed). */
/** An RFC 3339 timestamp (Anthropic's resets), as milliseconds from `nowMs` (0 when past). */
export function parseTimestamp(value: string, nowMs: number): number | undefined {
  if (!RFC_3339.test(value)) return undefined;
  const dateMs = Date.parse(value);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, Math.ceil(dateMs - nowMs));
}
