// The exact API key a provider was given never leaves it inside an error, nor anything downstream: the ModelProvider
// contract (contract.test.ts) checks that for keys of three shapes. Here, what only this provider does: credentials
// given as headers, and errors it does not own left as they are.
import { inspect } from 'node:util';
import { KeelError, type ModelRequest, serializeError } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer, startSse, writeSse } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openai, openaiCompatible } from './index.js';

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

/** Every form an error takes downstream: inspected (as console.log prints it), JSON, serialised, message, stack. */
function renderings(error: unknown): string[] {
  return [
    inspect(error, { depth: 10 }),
    inspect(error, { depth: 10, showHidden: true }),
    JSON.stringify(error),
    JSON.stringify(serializeError(error)),
    String(error),
    String((error as Error).stack),
  ];
}

function expectNoKey(value: unknown, key: string): void {
  for (const text of renderings(value)) expect(text).not.toContain(key);
}

describe('openai redaction', () => {
  it('also redacts credentials given as headers, and the key of openai()', async () => {
    const headerKey = 'azure0123456789key';
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 401, {
        error: { message: `bad keys ${KEYS.hex} and ${headerKey}`, code: 'invalid_api_key' },
      }),
    );
    const model = openai('gpt-test', {
      baseUrl: server.url,
      apiKey: KEYS.hex,
      headers: { 'api-key': headerKey },
    });
    const error = await model.generate(request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'provider.auth',
      message: 'HTTP 401: bad keys [redacted] and [redacted]',
    });
    expectNoKey(error, KEYS.hex);
    expectNoKey(error, headerKey);
  });

  it('leaves the abort reason and an error thrown by onTextDelta as they are', async () => {
    server = await startHttpTestServer((_request, response) => {
      startSse(response);
      writeSse(response, [{ data: { choices: [{ index: 0, delta: { content: 'a' } }] } }]);
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', apiKey: KEYS.groq });
    const thrown = new KeelError('guardrail.output', 'stop streaming');
    const error = await model
      .generate(
        request({
          onTextDelta: () => {
            throw thrown;
          },
        }),
      )
      .catch((caught: unknown) => caught);
    expect(error).toBe(thrown);
  });
});
