// The exact API key a provider was given never leaves it inside an error: not in the message, the stack, the cause
// chain, a response body or headers kept on the error, nor in anything downstream (events, run state, the result),
// whatever the key looks like. Keys of no known shape are the point: a Groq key, a 32-hex key, a short sk- key.
import { inspect } from 'node:util';
import {
  agent,
  KeelError,
  MemoryRunStore,
  type ModelRequest,
  type RunEvent,
  serializeError,
} from '@keel/core';
import {
  type HttpTestServer,
  sendJson,
  startHttpTestServer,
  startSse,
  type TestRequestHandler,
  writeSse,
} from '@keel/core/testing';
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

async function failure(key: string, handler: TestRequestHandler, overrides: Partial<ModelRequest> = {}) {
  server = await startHttpTestServer(handler);
  const model = openaiCompatible({ baseUrl: server.url, model: 'm', apiKey: key, provider: 'groq' });
  const error = await model.generate(request(overrides)).catch((caught: unknown) => caught);
  expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

const echoingBody = (key: string) => ({
  error: {
    message: `Incorrect API key provided: ${key}. You can find your API key at https://example.com.`,
    type: 'invalid_request_error',
    param: key,
    code: null,
    sent: { key, headers: `authorization=${key}` },
  },
});

describe.each(Object.entries(KEYS))('openai redacts a %s key', (_shape, key) => {
  it.each([
    [401, 'provider.auth'],
    [429, 'provider.rate_limited'],
    [500, 'provider.server_error'],
  ] as const)('from a %i whose body and headers echo it', async (status, code) => {
    const error = await failure(key, (_request, response) =>
      sendJson(response, status, echoingBody(key), { 'x-echo-key': key, 'retry-after': '1' }),
    );
    expect(error).toMatchObject({ code, status, provider: 'groq' });
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expectNoKey(error, key);
  });

  it('from a 500 plain-text body echoing it', async () => {
    const error = await failure(key, (_request, response) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(`upstream refused the credential ${key}`);
    });
    expect(error.code).toBe('provider.server_error');
    expectNoKey(error, key);
  });

  it('from a 200 body that is not JSON and echoes it', async () => {
    const error = await failure(key, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`not json, your key was ${key}`);
    });
    expect(error.code).toBe('provider.invalid_response');
    expect(error.message).toContain('[redacted]');
    expectNoKey(error, key);
  });

  it('from an error event mid-stream echoing it', async () => {
    const error = await failure(
      key,
      (_request, response) => {
        startSse(response);
        writeSse(response, [{ data: echoingBody(key) }]);
        response.end();
      },
      { onTextDelta: () => undefined },
    );
    expect(error.code).toBe('provider.bad_request');
    expectNoKey(error, key);
  });
});

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

  it('keeps the key out of a failed run: its result, events and stored state', async () => {
    const key = KEYS.groq;
    server = await startHttpTestServer((_request, response) => sendJson(response, 401, echoingBody(key)));
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', apiKey: key });
    const store = new MemoryRunStore();
    const events: RunEvent[] = [];
    const result = await agent({ model, store }).run('Hi', { onEvent: (event) => events.push(event) });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.auth');
    const stored = await store.loadRun(result.runId);
    for (const value of [result, events, stored]) {
      expect(inspect(value, { depth: 20 })).not.toContain(key);
      expect(JSON.stringify(value)).not.toContain(key);
    }
  });
});
