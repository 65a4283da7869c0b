// A successful body larger than maxResponseBytes fails at once with provider.response_too_large (not retryable), and
// the rest is not downloaded.
import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, startHttpTestServer, startSse, writeSse } from '@keel/core/testing';
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

async function failure(overrides: Partial<ModelRequest> = {}): Promise<KeelError> {
  const model = anthropic('c', { apiKey: 'k', baseUrl: server!.url, maxResponseBytes: 10_000 });
  const error = await model.generate(request(overrides)).catch((caught: unknown) => caught);
  if (!KeelError.isInstance(error)) throw new Error(`expected a KeelError, got ${String(error)}`);
  return error;
}

describe('anthropic maxResponseBytes', () => {
  it('fails a JSON body over the cap, not retryable, and stops reading it', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(20_000) }] }));
    });
    const error = await failure();
    expect(error).toMatchObject({
      code: 'provider.response_too_large',
      retryable: false,
      provider: 'anthropic',
      data: { maxResponseBytes: 10_000 },
    });
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('fails an event stream over the cap, and closes it', async () => {
    server = await startHttpTestServer((_request, response) => {
      startSse(response);
      writeSse(response, [
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        },
        ...Array.from({ length: 20 }, () => ({
          event: 'content_block_delta',
          data: {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: 'y'.repeat(1_000) },
          },
        })),
      ]);
    });
    const error = await failure({ onTextDelta: () => undefined });
    expect(error).toMatchObject({ code: 'provider.response_too_large', retryable: false });
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('refuses a maxResponseBytes that is not a positive whole number', () => {
    expect(() => anthropic('c', { apiKey: 'k', maxResponseBytes: 0 })).toThrow(
      expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(/maxResponseBytes/) }),
    );
  });
});
