import type { ErrorCode } from './codes.js';
import { errorNames, readString } from './error-chain.js';
import { codeForStatus, readHttpDetails } from './http-status.js';
import { type JsonValue, KeelError } from './keel-error.js';
import { codeForMessage, retryHintInMessage } from './message-patterns.js';
import { codeForBody, isProviderBodyShape, type ProviderBody, readProviderBody } from './provider-bodies.js';
import { MAX_RETRY_AFTER_MS, parseDurationMs, readHeader, retryAfterFromHeaders } from './retry-after.js';
import { verdictForSystemCode } from './system-codes.js';

// The built-in rule groups of `classify`, in its order. Each scans the whole cause chain, top first, and answers
// a verdict or undefined.

/** The rule that decided a classification, recorded as `data.rule`. */
export type RuleName =
  | 'user'
  | 'abort'
  | 'keel-error'
  | 'foreign-keel-error'
  | 'http'
  | 'provider-body'
  | 'system-code'
  | 'message'
  | 'fallback';

/** What a rule decided, before it becomes a KeelError. `link` is the member of the chain that decided it. */
export interface Verdict {
  code: ErrorCode;
  rule: RuleName;
  link: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
  status?: number;
  guidance?: string;
  detail?: string;
  data: Record<string, JsonValue>;
}

const TIMEOUT_NAMES = new Set(['TimeoutError', 'APIConnectionTimeoutError']);
const ABORT_NAMES = new Set(['AbortError', 'APIUserAbortError']);
const CONNECTION_NAMES = new Set(['APIConnectionError', 'FetchError']);

/**
 * The caller's signal's reason; a KeelError inside the chain; a `TimeoutError` anywhere (also when an `AbortError`
 * carries it as its cause, as Node's does) is `network.timeout`; otherwise an `AbortError` is `run.cancelled`.
 */
export function typedCause(chain: readonly unknown[], signal: AbortSignal | undefined): Verdict | undefined {
  const timeoutOrCancelled = (link: unknown): Verdict => {
    const timeout = chain.some((candidate) => errorNames(candidate).some((name) => TIMEOUT_NAMES.has(name)));
    return { code: timeout ? 'network.timeout' : 'run.cancelled', rule: 'abort', link, data: {} };
  };
  if (signal?.aborted === true && signal.reason !== undefined && chain.includes(signal.reason)) {
    return timeoutOrCancelled(signal.reason);
  }
  for (const link of chain.slice(1)) {
    if (KeelError.isInstance(link)) {
      return {
        code: link.code,
        rule: 'keel-error',
        link,
        retryable: link.retryable,
        retryAfterMs: link.retryAfterMs,
        status: link.status,
        guidance: link.guidance,
        data: { ...link.data },
      };
    }
  }
  const aborted = chain.find((link) =>
    errorNames(link).some((name) => TIMEOUT_NAMES.has(name) || ABORT_NAMES.has(name)),
  );
  return aborted === undefined ? undefined : timeoutOrCancelled(aborted);
}

/**
 * The first link with an HTTP status or headers. A specific body verdict (quota, overflow, overload) beats the
 * status; the status beats a generic body verdict (`invalid_request_error`, `api_error`).
 */
export function httpExchange(chain: readonly unknown[], nowMs: number): Verdict | undefined {
  for (const link of chain) {
    const details = readHttpDetails(link);
    if (details === undefined || (details.status === undefined && details.headers === undefined)) continue;
    const body = details.body === undefined ? undefined : readProviderBody(details.body);
    const fromBody = body === undefined ? undefined : codeForBody(body);
    const fromStatus = details.status === undefined ? undefined : codeForStatus(details.status);
    const code = fromBody?.specific === true ? fromBody.code : (fromStatus ?? fromBody?.code);
    if (code === undefined) continue;
    const data = bodyData(body);
    const requestId =
      details.headers &&
      (readHeader(details.headers, 'x-request-id') ?? readHeader(details.headers, 'request-id'));
    if (requestId) data.requestId = requestId;
    const detail =
      body?.message ??
      (typeof details.body === 'string' && !details.body.trimStart().startsWith('<')
        ? details.body
        : undefined) ??
      readString(link, 'message') ??
      readString(link, 'statusText');
    return {
      code,
      rule: 'http',
      link,
      status: details.status,
      retryAfterMs:
        (details.headers && retryAfterFromHeaders(details.headers, nowMs)) ??
        retryAfterFromMessage(code, detail),
      detail: details.status === undefined ? detail : `HTTP ${details.status}${detail ? `: ${detail}` : ''}`,
      data,
    };
  }
  return undefined;
}

/** A provider error body thrown on its own, such as an error event from a stream. */
export function providerBody(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    if (!isProviderBodyShape(link)) continue;
    const body = readProviderBody(link);
    const verdict = body === undefined ? undefined : codeForBody(body);
    if (verdict === undefined) continue;
    return {
      code: verdict.code,
      rule: 'provider-body',
      link,
      retryAfterMs: retryAfterFromMessage(verdict.code, body?.message),
      detail: body?.message,
      data: bodyData(body),
    };
  }
  return undefined;
}

/** A Node or undici system code anywhere in the chain; failing that, a client's connection error by name. */
export function systemCode(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    const code = readString(link, 'code');
    const verdict = code === undefined ? undefined : verdictForSystemCode(code);
    if (verdict === undefined || code === undefined) continue;
    return {
      code: verdict.code,
      rule: 'system-code',
      link,
      retryable: verdict.retryable,
      guidance: verdict.guidance,
      data: { systemCode: code },
    };
  }
  const connection = chain.find((link) => errorNames(link).some((name) => CONNECTION_NAMES.has(name)));
  return connection === undefined
    ? undefined
    : { code: 'network.connection', rule: 'system-code', link: connection, data: {} };
}

/** The last resort: words in a message, the top's first. */
export function messagePattern(chain: readonly unknown[]): Verdict | undefined {
  for (const link of chain) {
    const message = typeof link === 'string' ? link : readString(link, 'message');
    const code = message === undefined ? undefined : codeForMessage(message);
    if (code === undefined) continue;
    return { code, rule: 'message', link, retryAfterMs: retryAfterFromMessage(code, message), data: {} };
  }
  return undefined;
}

function retryAfterFromMessage(code: ErrorCode, message: string | undefined): number | undefined {
  if (code !== 'provider.rate_limited' || message === undefined) return undefined;
  const hint = retryHintInMessage(message);
  const milliseconds = hint === undefined ? undefined : parseDurationMs(hint);
  return milliseconds === undefined ? undefined : Math.min(milliseconds, MAX_RETRY_AFTER_MS);
}

function bodyData(body: ProviderBody | undefined): Record<string, JsonValue> {
  const data: Record<string, JsonValue> = {};
  if (body?.code !== undefined) data.providerCode = body.code;
  if (body?.type !== undefined) data.providerType = body.type;
  return data;
}
