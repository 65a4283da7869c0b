import { classify, KeelError } from '@keel/core';

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
 * Sends one POST and returns the response once it has a 2xx status. Exactly one request: nothing here retries.
 * A failed connection and a non-2xx status are thrown as classified KeelErrors; an abort rethrows the signal's reason.
 */
export async function post(request: PostRequest): Promise<Response> {
  const { signal, provider } = request;
  if (signal.aborted) throw signal.reason;
  let response: Response;
  try {
    response = await request.fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers },
      body: JSON.stringify(request.body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw classify(error, { provider });
  }
  if (response.ok) return response;
  let text = '';
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    // The status still says what happened; the unread body only loses detail.
  }
  throw classify({ status: response.status, headers: headersToRecord(response.headers), body: parseOrText(text) }, {
    provider,
  });
}

/** Reads a 2xx response body as JSON. A body cut off or not JSON is `provider.invalid_response`. */
export async function readJson(response: Response, signal: AbortSignal, provider: string): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw invalidResponse(provider, 'the response body was cut off before it ended', error, response.status);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidResponse(provider, `the response body is not JSON: ${excerpt(text)}`, error, response.status);
  }
}

/** A `provider.invalid_response` error: the upstream answered, but not in its wire format. Retryable. */
export function invalidResponse(provider: string, detail: string, cause?: unknown, status?: number): KeelError {
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
  return invalidResponse(provider, 'the event stream was cut off before it ended', error, 200);
}

export function headersToRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The start of a body, for error messages. */
export function excerpt(text: string, maxLength = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty)';
  return flat.length > maxLength ? `${flat.slice(0, maxLength)}…` : flat;
}
