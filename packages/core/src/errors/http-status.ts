import type { ErrorCode } from './codes.js';
import { readProperty } from './error-chain.js';
import type { HeadersLike } from './retry-after.js';

/**
 * The code an HTTP error status maps to, or undefined for statuses that are not errors.
 *
 * - 401 and 403 are `provider.auth`; 402 (Payment Required, Anthropic's `billing_error`) is
 *   `provider.quota_exhausted`.
 * - 408 is `network.timeout`; 409 is `provider.conflict`, retried as both official SDKs do (OpenAI answers 409 for
 *   transient lock contention).
 * - 413 is `provider.context_overflow`, not `bad_request`: the request carried more than the provider accepts, and
 *   the remedy is the one for an overflowing context (send less: trim the conversation or large attachments),
 *   which a plain bad request would never trigger.
 * - 429 is `provider.rate_limited`; 503 and 529 (Anthropic) are `provider.overloaded`; other 5xx are
 *   `provider.server_error`; other 4xx are `provider.bad_request`.
 */
export function codeForStatus(status: number): ErrorCode | undefined {
  switch (status) {
    case 401:
    case 403:
      return 'provider.auth';
    case 402:
      return 'provider.quota_exhausted';
    case 404:
      return 'provider.not_found';
    case 408:
      return 'network.timeout';
    case 409:
      return 'provider.conflict';
    case 413:
      return 'provider.context_overflow';
    case 429:
      return 'provider.rate_limited';
    case 503:
    case 529:
      return 'provider.overloaded';
  }
  if (status >= 500 && status <= 599) return 'provider.server_error';
  if (status >= 400 && status <= 499) return 'provider.bad_request';
  return undefined;
}

/** What an error or response says about the HTTP exchange behind it. */
export interface HttpDetails {
  status: number | undefined;
  headers: HeadersLike | undefined;
  body: unknown;
}

/**
 * Reads status, headers and body from the shapes users meet: errors of the official `openai` and
 * `@anthropic-ai/sdk` clients (`status`, `headers`, `error`), fetch `Response` objects (body unread: see
 * `classifyResponse`), `{ status, headers, body }` records, Node's `statusCode`, and HTTP clients that nest the
 * exchange under `response` (`response.status` / `response.data`). Undefined when the value has none of them.
 */
export function readHttpDetails(value: unknown): HttpDetails | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const own = readOwnDetails(value);
  const nested = readOwnDetails(readProperty(value, 'response'));
  const status = own.status ?? nested.status;
  const headers = own.headers ?? nested.headers;
  const body = own.body ?? nested.body;
  if (status === undefined && headers === undefined && body === undefined) return undefined;
  return { status, headers, body };
}

function readOwnDetails(value: unknown): HttpDetails {
  if (typeof value !== 'object' || value === null)
    return { status: undefined, headers: undefined, body: undefined };
  const statusValue = readProperty(value, 'status') ?? readProperty(value, 'statusCode');
  const status =
    typeof statusValue === 'number' &&
    Number.isInteger(statusValue) &&
    statusValue >= 100 &&
    statusValue <= 599
      ? statusValue
      : undefined;
  const headersValue = readProperty(value, 'headers');
  const headers =
    typeof headersValue === 'object' && headersValue !== null ? (headersValue as HeadersLike) : undefined;
  let body: unknown;
  // Only an exchange carries a body worth reading: a bare `error` property on an arbitrary object is not one.
  if (status !== undefined || headers !== undefined) {
    for (const key of ['error', 'body', 'data']) {
      const candidate = readProperty(value, key);
      if (isReadableBody(candidate)) {
        body = candidate;
        break;
      }
    }
  }
  return { status, headers, body };
}

function isReadableBody(value: unknown): boolean {
  if (typeof value === 'string') return value.length > 0;
  if (typeof value !== 'object' || value === null) return false;
  // A fetch Response's `body` is an unread stream, and reading it is asynchronous.
  return typeof (value as { getReader?: unknown }).getReader !== 'function';
}
