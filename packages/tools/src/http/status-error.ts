import { type Clock, classify, type ErrorCode, KeelError } from '@keel/core';
import type { DecodedBody } from './response-body.js';

/** How much of an error response's body the model is shown, in characters. */
const ERROR_BODY_CHARS = 4_000;

/** What the model can do about an endpoint's error status: the providers' own guidance speaks of models and keys. */
const GUIDANCE: Partial<Record<ErrorCode, string>> = {
  'provider.bad_request': 'The endpoint rejected the request: read the error body and correct the arguments.',
  'provider.not_found': 'Nothing was found there: check the identifiers you gave.',
  'provider.auth': 'The endpoint refused access to this resource; calling again will not help.',
  'provider.conflict': "The request conflicts with the resource's current state.",
  'provider.context_overflow': 'The request is larger than the endpoint accepts: send less.',
  'provider.rate_limited': 'The endpoint is limiting requests: wait before calling it again.',
  'provider.overloaded': 'The endpoint is overloaded: it may answer later.',
  'provider.server_error': 'The endpoint failed: it may work later.',
};

/** An endpoint's response. */
export interface StatusResponse {
  status: number;
  statusText: string;
  headers: Record<string, unknown>;
  decoded: DecodedBody;
}

/**
 * A 4xx or 5xx response as a KeelError, classified like a model provider's response by core's `classify` (429 →
 * `provider.rate_limited` with the Retry-After wait, 5xx retryable, other 4xx not), the body kept as `data.body`
 * for the model to read.
 */
export function statusError(
  response: StatusResponse,
  target: string,
  toolName: string,
  clock: Clock,
): KeelError {
  const { status, decoded } = response;
  const text = typeof decoded.body === 'string' ? decoded.body : JSON.stringify(decoded.body);
  const classified = classify(
    { status, headers: response.headers, body: text },
    { provider: toolName, nowMs: clock.now() },
  );
  const shown = text.length <= ERROR_BODY_CHARS ? decoded.body : `${text.slice(0, ERROR_BODY_CHARS)}…`;
  const reason = response.statusText === '' ? '' : ` ${response.statusText}`;
  return new KeelError(classified.code, `${target} answered ${status}${reason}`, {
    retryable: classified.retryable,
    retryAfterMs: classified.retryAfterMs,
    status,
    provider: toolName,
    data: { status, body: shown },
    guidance: GUIDANCE[classified.code] ?? classified.guidance,
    cause: classified,
  });
}
