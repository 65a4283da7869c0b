import { KeelError, type ModelRequest } from '@keel/core';
import {
  closedPort,
  type HttpTestServer,
  sendJson,
  startHttpTestServer,
  type TestRequestHandler,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

/** Calls generate against a server answering with `handler`; returns the error and proves one request was sent. */
async function failure(handler: TestRequestHandler): Promise<KeelError> {
  server = await startHttpTestServer(handler);
  const error = await anthropic('c', { apiKey: 'k', baseUrl: server.url })
    .generate(request())
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(server.requests).toHaveLength(1);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  expect(error.provider).toBe('anthropic');
  return error;
}

const anthropicError = (type: string, message: string) => ({ type: 'error', error: { type, message } });

describe('anthropic faults', () => {
  it('429 with Retry-After is provider.rate_limited with retryAfterMs', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        429,
        anthropicError('rate_limit_error', 'Number of requests has exceeded your rate limit'),
        {
          'retry-after': '7',
        },
      ),
    );
    expect(error).toMatchObject({
      code: 'provider.rate_limited',
      retryable: true,
      retryAfterMs: 7000,
      status: 429,
    });
  });

  it('529 overloaded_error is provider.overloaded, retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 529, anthropicError('overloaded_error', 'Overloaded')),
    );
    expect(error).toMatchObject({ code: 'provider.overloaded', retryable: true, status: 529 });
  });

  it.each([
    [500, 'provider.server_error'],
    [502, 'provider.server_error'],
    [503, 'provider.overloaded'],
  ])('%i is %s, retryable', async (status, code) => {
    const error = await failure((_request, response) =>
      sendJson(response, status, anthropicError('api_error', 'Internal server error')),
    );
    expect(error).toMatchObject({ code, retryable: true, status });
  });

  it('401 authentication_error is provider.auth, not retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 401, anthropicError('authentication_error', 'invalid x-api-key')),
    );
    expect(error).toMatchObject({ code: 'provider.auth', retryable: false, status: 401 });
  });

  it('400 prompt is too long is provider.context_overflow', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        400,
        anthropicError('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
      ),
    );
    expect(error).toMatchObject({ code: 'provider.context_overflow', retryable: false, status: 400 });
  });

  it('400 billing (credit balance) is provider.quota_exhausted, not retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 400, anthropicError('billing_error', 'Your credit balance is too low')),
    );
    expect(error).toMatchObject({ code: 'provider.quota_exhausted', retryable: false });
  });

  it('400 invalid_request_error saying the credit balance is too low is provider.quota_exhausted', async () => {
    const error = await failure((_request, response) =>
      sendJson(
        response,
        400,
        anthropicError(
          'invalid_request_error',
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        ),
      ),
    );
    expect(error).toMatchObject({ code: 'provider.quota_exhausted', retryable: false, status: 400 });
  });

  it.each([
    ['not JSON', '<html>gateway</html>'],
    ['without content', '{"type":"message","role":"assistant"}'],
    ['with a nameless tool_use', '{"content":[{"type":"tool_use","id":"t","input":{}}]}'],
  ])('a 200 body %s is provider.invalid_response, retryable', async (_label, body) => {
    const error = await failure((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('a 200 error body is classified from its type', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 200, anthropicError('overloaded_error', 'Overloaded')),
    );
    expect(error.code).toBe('provider.overloaded');
  });

  it('a body cut off mid-way (socket destroyed) is provider.invalid_response', async () => {
    const error = await failure((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"content":[{"type":"text","text":"Hel', () => response.destroy());
    });
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('a refused connection is network.connection', async () => {
    const port = await closedPort();
    const error = await anthropic('c', { apiKey: 'k', baseUrl: `http://127.0.0.1:${port}` })
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('network.connection');
  });

  it('an abort while waiting for the response rejects with the signal reason and closes the connection', async () => {
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    server = await startHttpTestServer(() => {
      controller.abort(reason);
    });
    const model = anthropic('c', { apiKey: 'k', baseUrl: server.url });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(reason);
    expect(await server.requests[0]!.closedEarly).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('an already aborted signal sends no request', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const controller = new AbortController();
    controller.abort();
    const model = anthropic('c', { apiKey: 'k', baseUrl: server.url });
    await expect(model.generate(request({ signal: controller.signal }))).rejects.toBe(
      controller.signal.reason,
    );
    expect(server.requests).toHaveLength(0);
  });
});
