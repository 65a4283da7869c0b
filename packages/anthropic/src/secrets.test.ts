// The exact API key the provider was given never leaves it inside an error, nor anything downstream: the
// ModelProvider contract (contract.test.ts) checks that for keys of three shapes. Here, credentials given as headers.
import { inspect } from 'node:util';
import { type ModelRequest, serializeError } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
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

const echoingBody = (key: string, type = 'invalid_request_error') => ({
  type: 'error',
  error: { type, message: `invalid x-api-key ${key}`, details: { key, header: `x-api-key: ${key}` } },
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
