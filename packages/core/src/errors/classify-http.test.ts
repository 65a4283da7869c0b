import { describe, expect, it } from 'vitest';
import { classify } from './classify.js';
import { classifyResponse } from './classify-response.js';
import { KeelError } from './keel-error.js';
import { MAX_RETRY_AFTER_MS } from './retry-after.js';

// Look-alikes of the official clients' errors, built the way `openai` and `@anthropic-ai/sdk` build theirs
// (src/core/error.ts in both), so classification is tested against their real shape without depending on them.

/** Headers as `openai` v5 and `@anthropic-ai/sdk` keep them (a fetch Headers), or as `openai` v4 did (a record). */
type SdkHeaders = Headers | Record<string, string> | undefined;

class APIError extends Error {
  readonly status: number | undefined;
  readonly headers: SdkHeaders;
  readonly error: unknown;
  constructor(status: number | undefined, error: unknown, message: string | undefined, headers: SdkHeaders) {
    const text =
      (error as { message?: string } | undefined)?.message ?? message ?? '(no status code or body)';
    super(status === undefined ? text : `${status} ${text}`);
    this.status = status;
    this.headers = headers;
    this.error = error;
  }
}

class BadRequestError extends APIError {}
class AuthenticationError extends APIError {}
class RateLimitError extends APIError {}
class InternalServerError extends APIError {}

class APIConnectionError extends APIError {
  constructor({ message, cause }: { message?: string; cause?: Error } = {}) {
    super(undefined, undefined, message ?? 'Connection error.', undefined);
    if (cause) this.cause = cause;
  }
}

class APIConnectionTimeoutError extends APIConnectionError {
  constructor() {
    super({ message: 'Request timed out.' });
  }
}

class APIUserAbortError extends APIError {
  constructor() {
    super(undefined, undefined, 'Request was aborted.', undefined);
  }
}

/** The `openai` client keeps the inner `error` object of the body `{ error: {...} }`. */
function openaiError(
  Kind: typeof APIError,
  status: number,
  inner: { code?: string | null; type?: string; message: string },
  headers: SdkHeaders = new Headers(),
): APIError {
  return new Kind(status, { param: null, code: null, ...inner }, undefined, headers);
}

/** The Anthropic client keeps the whole body `{ type: 'error', error: {...} }`. */
function anthropicError(
  Kind: typeof APIError,
  status: number,
  type: string,
  message: string,
  headers: SdkHeaders = new Headers({ 'request-id': 'req_011' }),
): APIError {
  return new Kind(status, { type: 'error', error: { type, message } }, undefined, headers);
}

/** An error carrying a Node or undici system code, as `net`, `dns` and undici throw them. */
function systemError(code: string, message = `${code} happened`, name = 'Error'): Error {
  const error = Object.assign(new Error(message), { code });
  error.name = name;
  return error;
}

interface Expected {
  code: string;
  retryable?: boolean;
  status?: number;
  retryAfterMs?: number;
  rule?: string;
  data?: Record<string, unknown>;
}

function expectClassified(input: unknown, expected: Expected, nowMs = NOW_MS): KeelError {
  const error = classify(input, { nowMs });
  expect(KeelError.isInstance(error)).toBe(true);
  expect(error.code).toBe(expected.code);
  if (expected.retryable !== undefined) expect(error.retryable).toBe(expected.retryable);
  if ('status' in expected) expect(error.status).toBe(expected.status);
  if ('retryAfterMs' in expected) expect(error.retryAfterMs).toBe(expected.retryAfterMs);
  if (expected.rule !== undefined) expect(error.data.rule).toBe(expected.rule);
  if (expected.data !== undefined) expect(error.data).toMatchObject(expected.data);
  expect(error.cause).toBe(input);
  return error;
}

const NOW_MS = Date.parse('2025-06-01T12:00:00Z');
const exchange = (status: number, body?: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body,
});

describe('classify: HTTP statuses', () => {
  const cases: readonly [status: number, code: string, retryable: boolean][] = [
    [400, 'provider.bad_request', false],
    [401, 'provider.auth', false],
    [402, 'provider.quota_exhausted', false],
    [403, 'provider.auth', false],
    [404, 'provider.not_found', false],
    [408, 'network.timeout', true],
    [409, 'provider.conflict', true],
    [413, 'provider.context_overflow', false],
    [418, 'provider.bad_request', false],
    [422, 'provider.bad_request', false],
    [429, 'provider.rate_limited', true],
    [500, 'provider.server_error', true],
    [502, 'provider.server_error', true],
    [503, 'provider.overloaded', true],
    [504, 'provider.server_error', true],
    [529, 'provider.overloaded', true],
    [599, 'provider.server_error', true],
  ];
  it.each(cases)('HTTP %i is %s', (status, code, retryable) => {
    const error = expectClassified(exchange(status), { code, retryable, status, rule: 'http' });
    expect(error.message).toBe(`HTTP ${status}`);
  });

  it('ignores a status that is not an error and decides on what else there is', () => {
    expectClassified(exchange(200), { code: 'internal.unexpected', rule: 'fallback' });
  });
});

describe('classify: provider error bodies', () => {
  const openai = (code: string | null, type: string, message = 'provider says no') => ({
    error: { message, type, param: null, code },
  });
  const anthropic = (type: string, message = 'provider says no') => ({
    type: 'error',
    error: { type, message },
  });

  const cases: readonly [label: string, input: unknown, expected: Expected][] = [
    [
      'OpenAI 429 insufficient_quota is an exhausted quota, not a rate limit, and no wait is offered',
      exchange(429, openai('insufficient_quota', 'insufficient_quota', 'You exceeded your current quota'), {
        'retry-after': '20',
      }),
      { code: 'provider.quota_exhausted', retryable: false, status: 429, retryAfterMs: undefined },
    ],
    [
      'OpenAI 400 context_length_exceeded',
      exchange(400, openai('context_length_exceeded', 'invalid_request_error')),
      { code: 'provider.context_overflow', data: { providerCode: 'context_length_exceeded' } },
    ],
    [
      'OpenAI 429 rate_limit_exceeded with retry-after-ms',
      exchange(429, openai('rate_limit_exceeded', 'requests'), { 'retry-after-ms': '750' }),
      { code: 'provider.rate_limited', retryAfterMs: 750 },
    ],
    [
      'OpenAI 429 without headers takes the wait from "Please try again in 20s."',
      exchange(
        429,
        openai('rate_limit_exceeded', 'tokens', 'Rate limit reached for gpt-4o. Please try again in 20s.'),
      ),
      { code: 'provider.rate_limited', retryAfterMs: 20_000 },
    ],
    [
      'OpenAI 401 invalid_api_key',
      exchange(401, openai('invalid_api_key', 'invalid_request_error')),
      { code: 'provider.auth' },
    ],
    [
      'OpenAI 500 server_error',
      exchange(500, openai(null, 'server_error')),
      { code: 'provider.server_error' },
    ],
    [
      'OpenAI 400 invalid_request_error',
      exchange(400, openai(null, 'invalid_request_error')),
      { code: 'provider.bad_request' },
    ],
    [
      'OpenAI 400 content_policy_violation',
      exchange(400, openai('content_policy_violation', 'invalid_request_error')),
      { code: 'provider.content_filter' },
    ],
    [
      'OpenAI 404 model_not_found',
      exchange(404, openai('model_not_found', 'invalid_request_error')),
      { code: 'provider.not_found' },
    ],
    [
      'Anthropic 529 overloaded_error',
      exchange(529, anthropic('overloaded_error')),
      { code: 'provider.overloaded', retryable: true },
    ],
    [
      'Anthropic 500 overloaded_error beats the status',
      exchange(500, anthropic('overloaded_error')),
      { code: 'provider.overloaded' },
    ],
    [
      'Anthropic 429 rate_limit_error: retry-after decides before its reset headers',
      exchange(429, anthropic('rate_limit_error'), {
        'retry-after': '5',
        'anthropic-ratelimit-tokens-remaining': '0',
        'anthropic-ratelimit-tokens-reset': '2025-06-01T12:00:12Z',
      }),
      { code: 'provider.rate_limited', retryAfterMs: 5_000, data: { providerType: 'rate_limit_error' } },
    ],
    [
      'Anthropic 429 rate_limit_error without retry-after: the reset of the exhausted limit',
      exchange(429, anthropic('rate_limit_error'), {
        'anthropic-ratelimit-tokens-remaining': '0',
        'anthropic-ratelimit-tokens-reset': '2025-06-01T12:00:12Z',
      }),
      { code: 'provider.rate_limited', retryAfterMs: 12_000, data: { providerType: 'rate_limit_error' } },
    ],
    ['Anthropic 500 api_error', exchange(500, anthropic('api_error')), { code: 'provider.server_error' }],
    [
      'Anthropic 401 authentication_error',
      exchange(401, anthropic('authentication_error')),
      { code: 'provider.auth' },
    ],
    [
      'Anthropic 403 permission_error',
      exchange(403, anthropic('permission_error')),
      { code: 'provider.auth' },
    ],
    [
      'Anthropic 404 not_found_error',
      exchange(404, anthropic('not_found_error')),
      { code: 'provider.not_found' },
    ],
    [
      'Anthropic 413 request_too_large',
      exchange(413, anthropic('request_too_large')),
      { code: 'provider.context_overflow' },
    ],
    [
      'Anthropic 402 billing_error',
      exchange(402, anthropic('billing_error')),
      { code: 'provider.quota_exhausted' },
    ],
    [
      'Anthropic 400 "prompt is too long" is an overflowing context',
      exchange(400, anthropic('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum')),
      { code: 'provider.context_overflow' },
    ],
    [
      'Anthropic 400 "credit balance is too low" is an exhausted quota',
      exchange(
        400,
        anthropic(
          'invalid_request_error',
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        ),
      ),
      { code: 'provider.quota_exhausted', retryable: false },
    ],
    [
      'Anthropic 400 other invalid_request_error stays a bad request',
      exchange(400, anthropic('invalid_request_error', 'messages: roles must alternate')),
      { code: 'provider.bad_request' },
    ],
    [
      'an error event inside a 200 stream (headers, no error status)',
      { status: 200, headers: {}, error: anthropic('overloaded_error') },
      { code: 'provider.overloaded', status: 200 },
    ],
    [
      'a thrown Anthropic stream error body',
      anthropic('overloaded_error', 'Overloaded'),
      { code: 'provider.overloaded', rule: 'provider-body', status: undefined },
    ],
    [
      'a thrown OpenAI body',
      openai('context_length_exceeded', 'invalid_request_error'),
      { code: 'provider.context_overflow', rule: 'provider-body' },
    ],
    [
      'a body given as JSON text',
      exchange(400, JSON.stringify(openai('context_length_exceeded', 'invalid_request_error'))),
      { code: 'provider.context_overflow' },
    ],
    [
      'a body given as bytes',
      exchange(529, new TextEncoder().encode(JSON.stringify(anthropic('overloaded_error')))),
      { code: 'provider.overloaded', data: { providerType: 'overloaded_error' } },
    ],
    [
      'a malformed JSON body leaves the status to decide',
      exchange(429, '{"error": {"code": "insufficient_'),
      { code: 'provider.rate_limited' },
    ],
    [
      'an HTML gateway page leaves the status to decide, and stays out of the message',
      exchange(502, '<html><body><h1>502 Bad Gateway</h1></body></html>'),
      { code: 'provider.server_error' },
    ],
    [
      'an HTTP client nesting the exchange under response (axios)',
      Object.assign(new Error('Request failed with status code 503'), {
        response: { status: 503, headers: { 'retry-after': '7' }, data: anthropic('overloaded_error') },
      }),
      { code: 'provider.overloaded', status: 503, retryAfterMs: 7_000 },
    ],
    [
      "Node's statusCode",
      { statusCode: 429, headers: { 'retry-after': '1' } },
      { code: 'provider.rate_limited', status: 429, retryAfterMs: 1_000 },
    ],
    [
      'a Retry-After HTTP-date relative to the injected now',
      exchange(503, undefined, { 'retry-after': 'Sun, 01 Jun 2025 12:00:45 GMT' }),
      { code: 'provider.overloaded', retryAfterMs: 45_000 },
    ],
    [
      'a Retry-After on a bad request is not a wait worth keeping',
      exchange(400, undefined, { 'retry-after': '5' }),
      { code: 'provider.bad_request', retryAfterMs: undefined },
    ],
    [
      'an absurd Retry-After is capped',
      exchange(429, undefined, { 'retry-after': '86400000' }),
      { code: 'provider.rate_limited', retryAfterMs: MAX_RETRY_AFTER_MS },
    ],
  ];
  it.each(cases)('%s', (_label, input, expected) => {
    expectClassified(input, expected);
  });

  it('puts the provider message in the error message, never the HTML page', () => {
    const overflow = classify(
      exchange(400, anthropic('invalid_request_error', 'prompt is too long: 9 tokens')),
    );
    expect(overflow.message).toBe('HTTP 400: prompt is too long: 9 tokens');
    const gateway = classify(exchange(502, '<html><body>502 Bad Gateway</body></html>'));
    expect(gateway.message).toBe('HTTP 502');
  });
});

describe('classify: errors of the official clients (duck typed)', () => {
  it('openai v4 RateLimitError with a plain record of headers', () => {
    const error = openaiError(
      RateLimitError,
      429,
      { code: 'rate_limit_exceeded', type: 'requests', message: 'slow down' },
      {
        'retry-after': '3',
        'x-request-id': 'req_abc',
      },
    );
    const result = expectClassified(error, {
      code: 'provider.rate_limited',
      status: 429,
      retryAfterMs: 3_000,
      data: { requestId: 'req_abc', providerCode: 'rate_limit_exceeded' },
    });
    expect(result.message).toBe('HTTP 429: slow down');
  });

  it('openai v5 RateLimitError with insufficient_quota and a Headers object', () => {
    const error = openaiError(
      RateLimitError,
      429,
      { code: 'insufficient_quota', type: 'insufficient_quota', message: 'You exceeded your current quota' },
      new Headers({ 'x-ratelimit-reset-requests': '1s' }),
    );
    expectClassified(error, { code: 'provider.quota_exhausted', retryable: false, retryAfterMs: undefined });
  });

  it('openai BadRequestError with context_length_exceeded', () => {
    const error = openaiError(BadRequestError, 400, {
      code: 'context_length_exceeded',
      type: 'invalid_request_error',
      message: "This model's maximum context length is 128000 tokens.",
    });
    expectClassified(error, { code: 'provider.context_overflow', status: 400 });
  });

  it('openai AuthenticationError', () => {
    const error = openaiError(AuthenticationError, 401, {
      code: 'invalid_api_key',
      type: 'invalid_request_error',
      message: 'Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz.',
    });
    const result = classify(error, { provider: 'openai' });
    expect(result.code).toBe('provider.auth');
    expect(result.provider).toBe('openai');
    expect(result.guidance).toContain('openai API key');
    expect(result.message).not.toContain('abcdefghijklmnop');
  });

  it('anthropic InternalServerError 529 overloaded, request id kept', () => {
    const error = anthropicError(InternalServerError, 529, 'overloaded_error', 'Overloaded');
    expectClassified(error, { code: 'provider.overloaded', status: 529, data: { requestId: 'req_011' } });
  });

  it('anthropic RateLimitError with RFC 3339 reset headers', () => {
    const headers = new Headers({
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': '2025-06-01T12:00:30Z',
    });
    const error = anthropicError(
      RateLimitError,
      429,
      'rate_limit_error',
      'Number of requests exceeded',
      headers,
    );
    expectClassified(error, { code: 'provider.rate_limited', retryAfterMs: 30_000 });
  });

  it('APIConnectionError holding an ECONNREFUSED cause', () => {
    const cause = systemError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:443');
    const result = expectClassified(new APIConnectionError({ cause }), {
      code: 'network.connection',
      retryable: true,
      rule: 'system-code',
      data: { systemCode: 'ECONNREFUSED' },
    });
    expect(result.message).toBe('Connection error.: connect ECONNREFUSED 127.0.0.1:443');
  });

  it('APIConnectionError without a cause', () => {
    expectClassified(new APIConnectionError(), { code: 'network.connection', rule: 'system-code' });
  });

  it('APIConnectionTimeoutError', () => {
    expectClassified(new APIConnectionTimeoutError(), { code: 'network.timeout', rule: 'abort' });
  });

  it('APIUserAbortError is a cancellation', () => {
    expectClassified(new APIUserAbortError(), { code: 'run.cancelled', retryable: false });
  });
});

describe('classify: fetch Response', () => {
  it('classifies a Response from status and headers, synchronously', () => {
    const response = new Response('{}', {
      status: 429,
      statusText: 'Too Many Requests',
      headers: { 'retry-after': '2' },
    });
    const result = expectClassified(response, {
      code: 'provider.rate_limited',
      status: 429,
      retryAfterMs: 2_000,
    });
    expect(result.message).toBe('HTTP 429: Too Many Requests');
  });

  it('classifyResponse reads the body: a 429 with insufficient_quota', async () => {
    const body = {
      error: {
        message: 'You exceeded your current quota',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
    };
    const response = new Response(JSON.stringify(body), { status: 429, headers: { 'retry-after': '20' } });
    const result = await classifyResponse(response, { provider: 'openai', nowMs: NOW_MS });
    expect(result.code).toBe('provider.quota_exhausted');
    expect(result.retryAfterMs).toBeUndefined();
    expect(result.message).toBe('HTTP 429: You exceeded your current quota');
    expect(result.provider).toBe('openai');
    expect((result.cause as { body: string }).body).toBe(JSON.stringify(body));
  });

  it('classifyResponse: Anthropic "prompt is too long"', async () => {
    const body = {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 201000 tokens > 200000 maximum' },
    };
    const result = await classifyResponse(new Response(JSON.stringify(body), { status: 400 }));
    expect(result.code).toBe('provider.context_overflow');
  });

  it('classifyResponse: a used body leaves the status to decide', async () => {
    const response = new Response('{"error":{"code":"insufficient_quota"}}', { status: 429 });
    await response.text();
    const result = await classifyResponse(response);
    expect(result.code).toBe('provider.rate_limited');
  });

  it('classifyResponse rejects what is not a Response', async () => {
    await expect(classifyResponse('nope' as never)).rejects.toMatchObject({ code: 'config.invalid' });
  });
});
