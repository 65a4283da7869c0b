import { KeelError, type ModelRequest } from '@keel/core';
import {
  closedPort,
  type HttpTestServer,
  sendJson,
  startHttpTestServer,
  type TestRequestHandler,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

/** Calls generate against a server answering with `handler`; returns the error and proves one request was sent. */
async function failure(
  handler: TestRequestHandler,
  overrides: Partial<ModelRequest> = {},
): Promise<KeelError> {
  server = await startHttpTestServer(handler);
  const model = openaiCompatible({ baseUrl: server.url, model: 'm', provider: 'vllm' });
  const error = await model.generate(request(overrides)).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(server.requests).toHaveLength(1);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  expect(error.provider).toBe('vllm');
  return error;
}

const openaiError = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code },
});

describe('openai faults', () => {
  it('429 with Retry-After is provider.rate_limited with retryAfterMs', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 429, openaiError('Rate limit reached', 'requests', 'rate_limit_exceeded'), {
        'retry-after': '2',
      }),
    );
    expect(error).toMatchObject({
      code: 'provider.rate_limited',
      retryable: true,
      retryAfterMs: 2000,
      status: 429,
    });
  });

  it('429 insufficient_quota is provider.quota_exhausted, not retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        429,
        openaiError('You exceeded your current quota', 'insufficient_quota', 'insufficient_quota'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider.quota_exhausted', retryable: false });
  });

  it.each([
    [500, 'provider.server_error'],
    [502, 'provider.server_error'],
    [503, 'provider.overloaded'],
  ])('%i is %s, retryable', async (status, code) => {
    const error = await failure((_request, response) => {
      response.writeHead(status, { 'content-type': 'text/html' });
      response.end('<html>upstream trouble</html>');
    });
    expect(error).toMatchObject({ code, retryable: true, status });
  });

  it('401 is provider.auth, not retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        401,
        openaiError('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider.auth', retryable: false, status: 401 });
  });

  it('400 context_length_exceeded is provider.context_overflow', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        400,
        openaiError(
          "This model's maximum context length is 8192 tokens",
          'invalid_request_error',
          'context_length_exceeded',
        ),
      ),
    );
    expect(error).toMatchObject({ code: 'provider.context_overflow', retryable: false, status: 400 });
  });

  it('a 200 carrying an error body (as OpenRouter sends) is classified from it', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 200, { error: { code: 502, message: 'Provider returned error' } }),
    );
    expect(error).toMatchObject({ code: 'provider.server_error', retryable: true });
  });

  it.each([
    ['not JSON', 'not json {'],
    ['without choices', '{"id":"x","object":"chat.completion"}'],
    ['with empty choices', '{"choices":[]}'],
    ['with a nameless tool call', '{"choices":[{"message":{"tool_calls":[{"id":"c","function":{}}]}}]}'],
  ])('a 200 body %s is provider.invalid_response, retryable', async (_label, body) => {
    const error = await failure((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('a body cut off mid-way (socket destroyed) is provider.invalid_response', async () => {
    const error = await failure((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"choices":[{"message":{"content":"Hel', () => response.destroy());
    });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
    expect(error.message).toContain('cut off');
  });

  it('a refused connection is network.connection', async () => {
    const port = await closedPort();
    const model = openaiCompatible({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' });
    const error = await model.generate(request()).catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('network.connection');
    expect((error as KeelError).provider).toBe('openai-compatible');
  });

  it('an abort while waiting for the response rejects with the signal reason and closes the connection', async () => {
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    server = await startHttpTestServer(() => {
      controller.abort(reason);
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'm' });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(reason);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('an abort while the error body is read rejects with the signal reason', async () => {
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.write('{"error":');
    });
    // Aborts exactly when the response head has arrived and the body is still pending.
    const fetchThenAbort: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      controller.abort(reason);
      return response;
    };
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', fetch: fetchThenAbort });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(reason);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('an abort while a 200 body is read rejects with the signal reason', async () => {
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"choices":');
    });
    const fetchThenAbort: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      controller.abort(reason);
      return response;
    };
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', fetch: fetchThenAbort });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(reason);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('an already aborted signal sends no request', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const controller = new AbortController();
    controller.abort();
    const model = openaiCompatible({ baseUrl: server.url, model: 'm' });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(
      controller.signal.reason,
    );
    expect(server.requests).toHaveLength(0);
  });
});
