// The faults only the Chat Completions wire has. Statuses, aborts, cut-off bodies and refused connections are the
// ModelProvider contract's (contract.test.ts).
import { KeelError, type ModelRequest } from '@keel/core';
import {
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

function request(): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal };
}

/** Calls generate against a server answering with `handler`; returns the error and proves one request was sent. */
async function failure(handler: TestRequestHandler): Promise<KeelError> {
  server = await startHttpTestServer(handler);
  const model = openaiCompatible({ baseUrl: server.url, model: 'm', provider: 'vllm' });
  const error = await model.generate(request()).then(
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
});
