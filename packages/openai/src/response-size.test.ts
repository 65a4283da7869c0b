// A successful body larger than maxResponseBytes fails at once with provider.response_too_large (not retryable), and
// the rest is not downloaded: retrying would download it again and fail the same way.
import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, startHttpTestServer, startSse, writeSse } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openai, openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

const LONG_ANSWER = JSON.stringify({
  choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(20_000) }, finish_reason: 'stop' }],
});

async function failure(model: ReturnType<typeof openaiCompatible>, overrides: Partial<ModelRequest> = {}) {
  const error = await model.generate(request(overrides)).catch((caught: unknown) => caught);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('openai maxResponseBytes', () => {
  it('fails a JSON body declared larger than the cap before reading it, not retryable', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(LONG_ANSWER.length),
      });
      response.write(LONG_ANSWER.slice(0, 100));
      // The rest never comes: the client must not wait for it.
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', maxResponseBytes: 10_000 });
    const error = await failure(model);
    expect(error).toMatchObject({
      code: 'provider.response_too_large',
      retryable: false,
      provider: 'openai-compatible',
      data: { maxResponseBytes: 10_000 },
    });
    expect(error.message).toContain('more than maxResponseBytes (10000 bytes)');
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('fails a chunked JSON body once it passes the cap, and stops reading it', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(LONG_ANSWER);
      // Still open: a body that would go on for ever.
    });
    const model = openai('gpt-test', { apiKey: 'k', baseUrl: server.url, maxResponseBytes: 10_000 });
    const error = await failure(model);
    expect(error).toMatchObject({ code: 'provider.response_too_large', retryable: false });
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('fails an event stream once it passes the cap, and closes it', async () => {
    server = await startHttpTestServer((_request, response) => {
      startSse(response);
      const chunk = { choices: [{ index: 0, delta: { content: 'y'.repeat(1_000) }, finish_reason: null }] };
      writeSse(
        response,
        Array.from({ length: 20 }, () => ({ data: chunk })),
      );
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', maxResponseBytes: 10_000 });
    const deltas: string[] = [];
    const error = await failure(model, { onTextDelta: (delta) => deltas.push(delta) });
    expect(error).toMatchObject({ code: 'provider.response_too_large', retryable: false });
    expect(deltas.length).toBeLessThan(20);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('reads a body under the cap, and has a 64 MiB default', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(LONG_ANSWER);
    });
    const capped = openaiCompatible({ baseUrl: server.url, model: 'm', maxResponseBytes: 30_000 });
    expect((await capped.generate(request())).content).toHaveLength(20_000);
    const unset = openaiCompatible({ baseUrl: server.url, model: 'm' });
    expect((await unset.generate(request())).content).toHaveLength(20_000);
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
