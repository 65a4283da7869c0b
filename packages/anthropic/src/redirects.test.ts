// A redirect from the provider's host never carries the key, the custom headers or the conversation to another origin.
import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

const KEY = 'sk-ant-api03-redirected-key-0123456789abcdef';
const CUSTOM = 'custom-header-secret-9f86d081884c7d65';
let servers: HttpTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

function request(): ModelRequest {
  return { messages: [{ role: 'user', content: 'the conversation' }], signal: new AbortController().signal };
}

const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'Hello.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
};

/** The other origin: a server on another port that records whatever reaches it and answers like the provider. */
async function otherOrigin(): Promise<HttpTestServer> {
  const server = await startHttpTestServer((_request, response) => sendJson(response, 200, message));
  servers.push(server);
  return server;
}

async function redirecting(status: number, location: (request: { url: string }) => string) {
  const server = await startHttpTestServer((recorded, response) => {
    if (recorded.url.startsWith('/moved')) return sendJson(response, 200, message);
    response.writeHead(status, { location: location(recorded) });
    response.end();
  });
  servers.push(server);
  return server;
}

function model(baseUrl: string) {
  return anthropic('claude-test', { apiKey: KEY, baseUrl, headers: { 'x-custom': CUSTOM } });
}

describe('anthropic and redirects', () => {
  it.each([307, 308, 302, 301, 303])(
    'refuses a %i to another origin before sending anything there',
    async (status) => {
      const other = await otherOrigin();
      const provider = await redirecting(status, (recorded) => `${other.url}${recorded.url}`);
      const error = await model(provider.url)
        .generate(request())
        .catch((caught: unknown) => caught);
      expect(KeelError.isInstance(error) && error.code).toBe('provider.redirect_refused');
      expect(error).toMatchObject({
        retryable: false,
        status,
        data: { from: provider.url, to: other.url },
      });
      expect(provider.requests).toHaveLength(1);
      expect(provider.requests[0]!.headers['x-api-key']).toBe(KEY);
      expect(other.requests).toHaveLength(0);
    },
  );

  it.each([307, 308])('follows a %i to the same origin, key and body kept', async (status) => {
    const provider = await redirecting(status, () => '/moved/v1/messages');
    const response = await model(provider.url).generate(request());
    expect(response.content).toBe('Hello.');
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]!.url).toBe('/moved/v1/messages');
    expect(provider.requests[1]!.method).toBe('POST');
    expect(provider.requests[1]!.headers['x-api-key']).toBe(KEY);
    expect(provider.requests[1]!.body).toBe(provider.requests[0]!.body);
  });

  it('refuses a same-origin 302, which would turn the POST into a GET', async () => {
    const provider = await redirecting(302, () => '/moved/v1/messages');
    const error = await model(provider.url)
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('provider.redirect_refused');
    expect(provider.requests).toHaveLength(1);
  });

  it('refuses a redirect loop after five same-origin hops', async () => {
    const provider = await redirecting(307, (recorded) => `/loop${recorded.url}`);
    const error = await model(provider.url)
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('provider.redirect_refused');
    expect(provider.requests).toHaveLength(6);
  });
});
