// A redirect from the provider's host never carries the key, the custom headers or the conversation to another origin
// (fetch itself drops only `authorization`; an `api-key` header or any custom one would follow).
import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatible } from './index.js';

const KEY = '9f86d081884c7d659a2feaa0c55ad015';
const CUSTOM = 'custom-header-secret-0a1b2c3d4e5f6a7b';
let servers: HttpTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

function request(): ModelRequest {
  return { messages: [{ role: 'user', content: 'the conversation' }], signal: new AbortController().signal };
}

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

async function start(handler: Parameters<typeof startHttpTestServer>[0]): Promise<HttpTestServer> {
  const server = await startHttpTestServer(handler);
  servers.push(server);
  return server;
}

function model(baseUrl: string) {
  return openaiCompatible({
    baseUrl,
    model: 'm',
    apiKey: KEY,
    provider: 'local',
    headers: { 'api-key': KEY, 'x-custom': CUSTOM },
  });
}

describe('openai and redirects', () => {
  it.each([307, 308, 302])('refuses a %i to another origin before sending anything there', async (status) => {
    const other = await start((_request, response) => sendJson(response, 200, completion));
    const provider = await start((recorded, response) => {
      response.writeHead(status, { location: `${other.url}${recorded.url}` });
      response.end();
    });
    const error = await model(`${provider.url}/v1`)
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('provider.redirect_refused');
    expect(error).toMatchObject({ retryable: false, status, data: { from: provider.url, to: other.url } });
    expect(provider.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(other.requests).toHaveLength(0);
  });

  it('follows a 307 to the same origin', async () => {
    const provider = await start((recorded, response) => {
      if (recorded.url.startsWith('/moved')) return sendJson(response, 200, completion);
      response.writeHead(307, { location: '/moved/v1/chat/completions' });
      response.end();
    });
    const response = await model(`${provider.url}/v1`).generate(request());
    expect(response.content).toBe('Hello.');
    expect(provider.requests[1]!.headers['x-custom']).toBe(CUSTOM);
  });
});
