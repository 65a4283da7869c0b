import { classify } from '../errors/classify.js';
import { classifyResponse } from '../errors/classify-response.js';
import { KeelError } from '../errors/keel-error.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readBoundedText } from './response-size.js';

/** What one upstream call needs. */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  fetch: typeof globalThis.fetch;
  /** The provider's name, set on every error. */
  provider: string;
}

/**
 * Classifies an error carried in a body rather than by an HTTP status: an error event mid-stream, or a 200 whose
 * body is an error. The provider said it failed without saying how, so a body keel cannot place is
 * `provider.server_error` rather than `internal.unexpected`.
 */
export function classifyBodyError(body: unknown, provider: string, status?: number): KeelError {
  const error = classify(status === undefined ? body : { status, headers: {}, body }, { provider });
  if (error.code !== 'internal.unexpected') return error;
  return new KeelError('provider.server_error', `${provider} reported an error: ${error.message}`, {
    provider,
    status,
    cause: error.cause,
  });
}

/** Redirects a provider call follows, all to the same origin, before it gives up. */
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Sends one POST and returns the response once it has a 2xx status. Exactly one request: nothing here retries.
 * A failed connection and a non-2xx status are thrown as classified KeelErrors; an abort rethrows the signal's reason.
 *
 * Redirects are followed by hand (`redirect: 'manual'`), and only a 307 or 308 to the same origin (scheme, host and
 * port), which keeps the method and body, at most 5 times. Any other redirect, and first of all one to another
 * origin, is `provider.redirect_refused` (not retryable) before anything is sent there: fetch itself would carry
 * `x-api-key`, `api-key` and every other custom header, and the conversation, to the new origin (it drops only
 * `authorization`).
 */
export async function post(request: PostRequest): Promise<Response> {
  const { signal, provider } = request;
  if (signal.aborted) throw signal.reason;
  const init: RequestInit = {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...request.headers },
    body: JSON.stringify(request.body),
    signal,
    redirect: 'manual',
  };
  let url = request.url;
  for (let redirects = 0; ; redirects++) {
    let response: Response;
    try {
      response = await request.fetch(url, init);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw classify(error, { provider });
    }
    if (response.ok) return response;
    if (response.type === 'opaqueredirect' || REDIRECT_STATUSES.has(response.status)) {
      const next = redirectTarget(response, url, redirects, provider);
      await response.body?.cancel().catch(() => undefined);
      url = next;
      continue;
    }
    // Reads the error body (bounded) so provider codes such as `insufficient_quota` decide, then releases the connection.
    const error = await classifyResponse(response, { provider, signal });
    if (signal.aborted) throw signal.reason;
    throw error;
  }
}

/** Where a redirect may be followed to: the same origin by a 307 or 308, within {@link MAX_REDIRECTS}; else throws. */
function redirectTarget(response: Response, current: string, redirects: number, provider: string): string {
  const from = new URL(current);
  const location = response.headers.get('location');
  const to = location === null ? null : parseLocation(location, from);
  const refuse = (detail: string): never => {
    void response.body?.cancel().catch(() => undefined);
    throw new KeelError(
      'provider.redirect_refused',
      `${provider} at ${from.origin} answered ${response.status} with a redirect ${detail}`,
      {
        provider,
        status: response.status,
        data: { from: from.origin, to: to?.origin ?? null, redirects },
      },
    );
  };
  if (to === null) return refuse('without a usable location');
  if (to.origin !== from.origin) {
    return refuse(
      `to another origin, ${to.origin}; keel sends neither the key nor the conversation there (set baseUrl to it if you trust it)`,
    );
  }
  if (response.status !== 307 && response.status !== 308)
    return refuse('that would turn the POST into a GET; only 307 and 308 are followed');
  if (redirects >= MAX_REDIRECTS) return refuse(`after ${MAX_REDIRECTS} redirects already`);
  return to.href;
}

/** The URL a `location` header names, or null when it names none. (`URL.parse` needs Node 22.) */
function parseLocation(location: string, base: URL): URL | null {
  try {
    return new URL(location, base);
  } catch {
    return null;
  }
}

/**
 * Reads a 2xx response body as JSON. A body cut off or not JSON is `provider.invalid_response`; a body over
 * `maxBytes` is `provider.response_too_large` (not retryable), read no further.
 *
 * @param maxBytes The largest body read, in bytes. Defaults to {@link DEFAULT_MAX_RESPONSE_BYTES} (64 MiB).
 */
export async function readJson(
  response: Response,
  signal: AbortSignal,
  provider: string,
  maxBytes: number = DEFAULT_MAX_RESPONSE_BYTES,
): Promise<unknown> {
  let text: string;
  try {
    text = await readBoundedText(response, maxBytes, provider);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (KeelError.isInstance(error)) throw error;
    throw malformedResponseError(
      provider,
      'the response body was cut off before it ended',
      error,
      response.status,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw malformedResponseError(
      provider,
      `the response body is not JSON: ${excerpt(text)}`,
      error,
      response.status,
    );
  }
}

/** A `provider.invalid_response` error: the upstream answered, but not in its wire format. Retryable. */
export function malformedResponseError(
  provider: string,
  detail: string,
  cause?: unknown,
  status?: number,
): KeelError {
  return new KeelError('provider.invalid_response', `${provider} sent an invalid response: ${detail}`, {
    provider,
    status,
    cause,
  });
}

/** The error to throw when reading a stream fails: the abort reason, or a cut-off stream. */
export function streamReadError(error: unknown, signal: AbortSignal, provider: string): unknown {
  if (signal.aborted) return signal.reason;
  if (KeelError.isInstance(error)) return error;
  return malformedResponseError(provider, 'the event stream was cut off before it ended', error, 200);
}

/** The start of a body, for error messages. */
export function excerpt(text: string, maxLength = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty)';
  return flat.length > maxLength ? `${flat.slice(0, maxLength)}…` : flat;
}
