import type { ServerResponse } from 'node:http';
import type { JsonValue } from '@keel/core';
import type { FaultKind } from './faults.js';

/** Fault kinds answered with an HTTP error status, before the brain is asked anything. */
export type StatusFault = Extract<
  FaultKind,
  'rate_limit' | 'server_error' | 'bad_gateway' | 'unavailable' | 'overloaded' | 'context_overflow'
>;

const STATUS_FAULTS: readonly FaultKind[] = [
  'rate_limit',
  'server_error',
  'bad_gateway',
  'unavailable',
  'overloaded',
  'context_overflow',
];

/** Whether `kind` is answered with an error status. */
export function isStatusFault(kind: FaultKind): kind is StatusFault {
  return STATUS_FAULTS.includes(kind);
}

/** An OpenAI-style error body. */
export function errorBody(
  message: string,
  type: string,
  code: string | null,
  param: string | null = null,
): JsonValue {
  return { error: { message, type, param, code } };
}

/** Sends `body` as JSON with `status`. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: JsonValue,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** What a status fault needs to know about the request. */
export interface StatusFaultContext {
  model: string;
  retryAfterMs: number;
  contextWindowTokens: number;
  promptTokens: number;
}

const BAD_GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
  '<hr><center>keel-simulated-proxy</center>\r\n</body>\r\n</html>\r\n';

/** Answers a status fault the way OpenAI (or the proxy in front of it) does. Returns the status sent. */
export function sendStatusFault(
  response: ServerResponse,
  kind: StatusFault,
  context: StatusFaultContext,
  headers: Record<string, string>,
): number {
  switch (kind) {
    case 'rate_limit': {
      // Whole seconds rounded down, so `retry-after` never asks for more than `retry-after-ms` (clients that read
      // both and take the larger would otherwise wait a whole second for a 250 ms limit).
      const seconds = Math.floor(context.retryAfterMs / 1000);
      sendJson(
        response,
        429,
        errorBody(
          `Rate limit reached for ${context.model} in organization org-simulated on requests per min (RPM): ` +
            `Limit 60, Used 60, Requested 1. Please try again in ${context.retryAfterMs}ms.`,
          'requests',
          'rate_limit_exceeded',
        ),
        {
          ...headers,
          'retry-after': String(seconds),
          'retry-after-ms': String(context.retryAfterMs),
          'x-ratelimit-limit-requests': '60',
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': `${context.retryAfterMs}ms`,
        },
      );
      return 429;
    }
    case 'server_error':
      sendJson(
        response,
        500,
        errorBody(
          'The server had an error while processing your request. Sorry about that!',
          'server_error',
          null,
        ),
        headers,
      );
      return 500;
    case 'bad_gateway':
      response.writeHead(502, {
        ...headers,
        'content-type': 'text/html',
        'content-length': String(Buffer.byteLength(BAD_GATEWAY_PAGE)),
      });
      response.end(BAD_GATEWAY_PAGE);
      return 502;
    case 'unavailable':
      sendJson(
        response,
        503,
        errorBody(
          'The service is temporarily unavailable. Please try again later.',
          'server_error',
          'service_unavailable',
        ),
        headers,
      );
      return 503;
    case 'overloaded':
      sendJson(
        response,
        529,
        errorBody(
          'The model is currently overloaded with other requests. Please try again later.',
          'server_error',
          'overloaded',
        ),
        headers,
      );
      return 529;
    case 'context_overflow': {
      const tokens = Math.max(context.promptTokens, context.contextWindowTokens + 1);
      sendJson(
        response,
        400,
        errorBody(
          `This model's maximum context length is ${context.contextWindowTokens} tokens. However, your messages ` +
            `resulted in ${tokens} tokens. Please reduce the length of the messages.`,
          'invalid_request_error',
          'context_length_exceeded',
          'messages',
        ),
        headers,
      );
      return 400;
    }
  }
}
