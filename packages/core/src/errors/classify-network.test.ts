// Real faults from Node's fetch against real servers on 127.0.0.1: the shapes users meet, not imitations.
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { classify } from './classify.js';
import { classifyResponse } from './classify-response.js';

const servers: Server[] = [];

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('classify: real faults from fetch', () => {
  it('a closed port is ECONNREFUSED: network.connection, retryable', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));

    const error = await rejection(fetch(`http://127.0.0.1:${port}/v1/chat/completions`));
    const result = classify(error, { provider: 'openai' });
    expect(result).toMatchObject({ code: 'network.connection', retryable: true, provider: 'openai' });
    expect(result.data).toMatchObject({ rule: 'system-code', systemCode: 'ECONNREFUSED' });
    expect(result.message).toMatch(/^fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(result.cause).toBe(error);
  });

  it('a socket destroyed before the headers: network.connection', async () => {
    const url = await serve((request) => request.socket.destroy());
    const result = classify(await rejection(fetch(url)));
    expect(result).toMatchObject({ code: 'network.connection', retryable: true });
    expect(result.data.systemCode).toBe('UND_ERR_SOCKET');
  });

  it('a socket destroyed mid-response, after headers and part of the body: network.connection', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      response.write('{"choices":[{"mess', () => response.socket?.destroy());
    });
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const error = await rejection(response.text());
    const result = classify(error);
    expect(result).toMatchObject({ code: 'network.connection', retryable: true });
    expect(result.data.systemCode).toBe('UND_ERR_SOCKET');
    expect(result.message).toBe('terminated: other side closed');
  });

  it('a reset seen by node:http is "socket hang up" with ECONNRESET', async () => {
    const url = await serve((request) => request.socket.destroy());
    const error = await new Promise<unknown>((resolve) => {
      const request = get(url, () => resolve(new Error('expected no response')));
      request.on('error', resolve);
    });
    const result = classify(error);
    expect(result).toMatchObject({ code: 'network.connection', message: 'socket hang up' });
    expect(result.data.systemCode).toBe('ECONNRESET');
  });

  describe('a server that never answers', () => {
    async function silentServer(): Promise<{ url: string; requestSeen: Promise<void> }> {
      let markSeen!: () => void;
      const requestSeen = new Promise<void>((resolve) => {
        markSeen = resolve;
      });
      const url = await serve(() => markSeen());
      return { url, requestSeen };
    }

    it('aborted by the caller once the server holds the request: run.cancelled', async () => {
      const { url, requestSeen } = await silentServer();
      const controller = new AbortController();
      const pending = rejection(fetch(url, { signal: controller.signal }));
      await requestSeen;
      controller.abort();
      const result = classify(await pending, { signal: controller.signal });
      expect(result).toMatchObject({ code: 'run.cancelled', retryable: false });
    });

    it('aborted with a timeout reason, as AbortSignal.timeout does: network.timeout', async () => {
      const { url, requestSeen } = await silentServer();
      const controller = new AbortController();
      const pending = rejection(fetch(url, { signal: controller.signal }));
      await requestSeen;
      controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      const result = classify(await pending);
      expect(result).toMatchObject({ code: 'network.timeout', retryable: true });
    });

    it('aborted with a custom reason: cancelled only when the caller signal is known', async () => {
      const { url, requestSeen } = await silentServer();
      const controller = new AbortController();
      const pending = rejection(fetch(url, { signal: controller.signal }));
      await requestSeen;
      controller.abort(new Error('user closed the tab'));
      const error = await pending;
      expect(classify(error).code).toBe('internal.unexpected');
      expect(classify(error, { signal: controller.signal }).code).toBe('run.cancelled');
    });
  });

  it('a real 429 with Retry-After and an OpenAI quota body, read by classifyResponse', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': '7',
        'x-request-id': 'req_42',
      });
      response.end(
        JSON.stringify({
          error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
        }),
      );
    });
    const result = await classifyResponse(await fetch(url), { provider: 'openai' });
    expect(result).toMatchObject({ code: 'provider.rate_limited', status: 429, retryAfterMs: 7_000 });
    expect(result.data).toMatchObject({ requestId: 'req_42', providerCode: 'rate_limit_exceeded' });
    expect(result.message).toBe('HTTP 429: Rate limit reached');
  });

  it('a real 529 from an Anthropic-shaped server', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(529, { 'content-type': 'application/json', 'request-id': 'req_011' });
      response.end(
        JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      );
    });
    const result = await classifyResponse(await fetch(url), { provider: 'anthropic' });
    expect(result).toMatchObject({
      code: 'provider.overloaded',
      status: 529,
      message: 'HTTP 529: Overloaded',
    });
  });
});
