// maxResponseBytes: a successful body over the cap fails with provider.response_too_large and is read no further; the
// ModelProvider contract (contract.test.ts) checks that for bodies and streams. Here, what only these options do.
import type { ModelRequest } from '@keel/core';
import { type HttpTestServer, startHttpTestServer } from '@keel/core/testing';
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

const LONG_ANSWER = JSON.stringify({
  choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(20_000) }, finish_reason: 'stop' }],
});

describe('openai maxResponseBytes', () => {
  it('has a 64 MiB default, and states the cap in the error', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(LONG_ANSWER);
    });
    const unset = openaiCompatible({ baseUrl: server.url, model: 'm' });
    expect((await unset.generate(request())).content).toHaveLength(20_000);
    const capped = openaiCompatible({ baseUrl: server.url, model: 'm', maxResponseBytes: 10_000 });
    const error = await capped.generate(request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'provider.response_too_large',
      message: expect.stringContaining('more than maxResponseBytes (10000 bytes)'),
    });
  });

  it('refuses a maxResponseBytes that is not a positive whole number', () => {
    for (const value of [0, -1, 1.5, Number.NaN, '1000']) {
      expect(() =>
        openaiCompatible({ baseUrl: 'http://127.0.0.1:1', model: 'm', maxResponseBytes: value as number }),
      ).toThrow(
        expect.objectContaining({
          code: 'config.invalid',
          message: expect.stringMatching(/maxResponseBytes/),
        }),
      );
    }
  });
});
