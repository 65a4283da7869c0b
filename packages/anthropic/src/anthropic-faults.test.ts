// The faults only the Messages wire has. Statuses, aborts, cut-off bodies and refused connections are the
// ModelProvider contract's (contract.test.ts).
import { KeelError, type ModelRequest } from '@keel/core';
import {
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

function request(): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal };
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
  it('529 overloaded_error is provider.overloaded, retryable', async () => {
    const error = await failure((_request, response) =>
      sendJson(response, 529, anthropicError('overloaded_error', 'Overloaded')),
    );
    expect(error).toMatchObject({ code: 'provider.overloaded', retryable: true, status: 529 });
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
});
