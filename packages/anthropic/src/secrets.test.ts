// The exact API key the provider was given never leaves it inside an error, whatever the key looks like.
import { inspect } from 'node:util';
import { KeelError, type ModelRequest, serializeError } from '@keel/core';
import {
  type HttpTestServer,
  sendJson,
  startHttpTestServer,
  startSse,
  type TestRequestHandler,
  writeSse,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEYS = {
  groq: 'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz',
  hex: '9f86d081884c7d659a2feaa0c55ad015',
  'short sk-': 'sk-4f9Qz1',
} as const;

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

function expectNoKey(error: unknown, key: string): void {
  const renderings = [
    inspect(error, { depth: 10 }),
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
    JSON.stringify(serializeError(error)),
    String(error),
    String((error as Error).stack),
  ];
  for (const text of renderings) expect(text).not.toContain(key);
}

async function failure(key: string, handler: TestRequestHandler, overrides: Partial<ModelRequest> = {}) {
  server = await startHttpTestServer(handler);
  const model = anthropic('c', { apiKey: key, baseUrl: server.url });
  const error = await model.generate(request(overrides)).catch((caught: unknown) => caught);
  expect(server.requests[0]!.headers['x-api-key']).toBe(key);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

const echoingBody = (key: string, type = 'invalid_request_error') => ({
  type: 'error',
  error: { type, message: `invalid x-api-key ${key}`, details: { key, header: `x-api-key: ${key}` } },
});

describe.each(Object.entries(KEYS))('anthropic redacts a %s key', (_shape, key) => {
  it.each([
    [401, 'authentication_error', 'provider.auth'],
    [429, 'rate_limit_error', 'provider.rate_limited'],
    [500, 'api_error', 'provider.server_error'],
  ] as const)('from a %i whose body and headers echo it', async (status, type, code) => {
    const error = await failure(key, (_request, response) =>
      sendJson(response, status, echoingBody(key, type), { 'x-echo-key': key, 'request-id': 'req_1' }),
    );
    expect(error).toMatchObject({ code, status, provider: 'anthropic' });
    expect(error.message).toContain(`invalid x-api-key ${'[redacted]'}`);
    expectNoKey(error, key);
  });

  it('from a 200 body that is not JSON and echoes it', async () => {
    const error = await failure(key, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`<html>proxy saw ${key}</html>`);
    });
    expect(error.code).toBe('provider.invalid_response');
    expectNoKey(error, key);
  });

  it('from an error event mid-stream echoing it', async () => {
    const error = await failure(
      key,
      (_request, response) => {
        startSse(response);
        writeSse(response, [{ event: 'error', data: echoingBody(key, 'overloaded_error') }]);
        response.end();
      },
      { onTextDelta: () => undefined },
    );
    expect(error.code).toBe('provider.overloaded');
    expectNoKey(error, key);
  });
});

describe('anthropic redaction', () => {
  it('also redacts credentials given as headers', async () => {
    const proxyToken = 'proxy-token-0123456789';
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 403, echoingBody(proxyToken, 'permission_error')),
    );
    const model = anthropic('c', { baseUrl: server.url, headers: { Authorization: `Bearer ${proxyToken}` } });
    const error = await model.generate(request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'provider.auth' });
    expectNoKey(error, proxyToken);
  });
});
