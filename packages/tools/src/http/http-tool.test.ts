import { KeelError } from '@keel/core';
import { FakeClock, type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callTool, rejection } from '../test-support.js';
import { type HttpToolOptions, httpTool } from './http-tool.js';

let server: HttpTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const itemInput = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    expand: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    title: { type: 'string' },
    tenant: { type: 'string' },
  },
  required: ['id'],
} as const;

function itemTool(extra: Partial<HttpToolOptions<unknown>> = {}) {
  return httpTool({
    name: 'get_item',
    description: 'Reads an item',
    input: itemInput,
    url: `${server!.url}/items/{id}`,
    allow: ['127.0.0.1'],
    ...extra,
  });
}

describe('httpTool: requests', () => {
  it('fills the path, encoding the value so it cannot add a segment, a parameter or a fragment', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, { ok: true }));
    const output = await callTool(itemTool(), { id: 'a/b?c=d#e f' });
    expect(server.requests[0]!.url).toBe('/items/a%2Fb%3Fc%3Dd%23e%20f');
    expect(output).toEqual({ status: 200, contentType: 'application/json', body: { ok: true } });
  });

  it.each(['..', '.'])('refuses %j as a whole path segment (it would move up the path)', async (id) => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const error = await rejection(callTool(itemTool(), { id }));
    expect(error.code).toBe('tool.invalid_input');
    expect(server.requests).toHaveLength(0);
  });

  it('adds query parameters, leaving out those without a value, and encodes & and =', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const tool = itemTool({ query: { expand: '{expand}', tenant: '{tenant}', fixed: 'yes' } });
    await callTool(tool, { id: '7', expand: "a&b=c'" });
    expect(server.requests[0]!.url).toBe('/items/7?expand=a%26b%3Dc%27&fixed=yes');
  });

  it('sends headers filled from the input, and refuses a value that would add a header line', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const tool = itemTool({ headers: { 'X-Tenant': '{tenant}', Authorization: 'Bearer fixed-token' } });
    await callTool(tool, { id: '1', tenant: 'acme' });
    expect(server.requests[0]!.headers).toMatchObject({
      'x-tenant': 'acme',
      authorization: 'Bearer fixed-token',
    });
    const error = await rejection(callTool(tool, { id: '1', tenant: 'acme\r\nX-Admin: true' }));
    expect(error.code).toBe('tool.invalid_input');
    expect(server.requests).toHaveLength(1);
  });

  it('calls a headers hook with the input and the call context (where trace headers go)', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 200, {}));
    const tool = itemTool({
      headers: (_input, context) => ({
        traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
        'x-run': context.runId,
      }),
    });
    await callTool(tool, { id: '1' });
    expect(server.requests[0]!.headers).toMatchObject({
      traceparent: expect.stringMatching(/^00-a{32}-/),
      'x-run': 'run-1',
    });
  });

  it('sends a JSON body from a template, keeping value types, with the idempotency key', async () => {
    server = await startHttpTestServer((_request, response) => sendJson(response, 201, { created: true }));
    const tool = itemTool({
      method: 'POST',
      url: `${server.url}/items`,
      body: { title: 'Bug: {title}', tags: '{tags}', tenant: '{tenant}', source: 'keel' },
    });
    const output = await callTool(tool, { id: 'x', title: 'crash', tags: ['a', 'b'] });
    const request = server.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['idempotency-key']).toBe('run-1:1:0');
    expect(request.json()).toEqual({ title: 'Bug: crash', tags: ['a', 'b'], source: 'keel' });
    expect(output.status).toBe(201);
    expect(tool.idempotent).toBe(false);
  });

  it('returns text bodies as text, and leaves binary bodies out with a note', async () => {
    server = await startHttpTestServer((request, response) => {
      const binary = request.url.endsWith('/png');
      response.writeHead(200, { 'content-type': binary ? 'image/png' : 'text/plain; charset=utf-8' });
      response.end(binary ? Buffer.alloc(300) : 'plain words');
    });
    expect((await callTool(itemTool(), { id: 'txt' })).body).toBe('plain words');
    const binary = await callTool(itemTool(), { id: 'png' });
    expect(binary.body).toBeNull();
    expect(binary.note).toBe('The body is image/png (300 bytes), not text; it is not shown.');
  });
});

describe('httpTool: responses', () => {
  it('cuts a giant body at maxResponseBytes and says so, without reading the rest', async () => {
    let written = 0;
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = `${'x'.repeat(1023)}\n`;
      const pump = (): void => {
        // Writes until the client stops reading: an endless body.
        while (written < 64 * 1024 * 1024 && response.write(chunk)) written += chunk.length;
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    const output = await callTool(itemTool({ maxResponseBytes: 10_000 }), { id: 'huge' });
    expect(typeof output.body).toBe('string');
    expect((output.body as string).length).toBe(10_000);
    expect(output.note).toContain('The body was cut after 10000 bytes');
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('gives a 404 to the model as data: tool error with the body, not retryable', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 404, { error: 'no item 42' }),
    );
    const error = await rejection(callTool(itemTool(), { id: '42' }));
    expect(error.code).toBe('provider.not_found');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(`GET ${server.url}/items/42 answered 404 Not Found`);
    expect(error.data).toEqual({ status: 404, body: { error: 'no item 42' } });
    expect(error.guidance).toBe('Nothing was found there: check the identifiers you gave.');
  });

  it('classifies a 429 as provider.rate_limited, retryable, with the Retry-After wait', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 429, { error: 'slow down' }, { 'retry-after': '7' }),
    );
    const error = await rejection(callTool(itemTool(), { id: '1' }));
    expect(error.code).toBe('provider.rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(7_000);
  });

  it('classifies a 503 as retryable and a 400 as not', async () => {
    server = await startHttpTestServer((request, response) =>
      sendJson(response, request.url.endsWith('/busy') ? 503 : 400, { error: 'no' }),
    );
    expect((await rejection(callTool(itemTool(), { id: 'busy' }))).retryable).toBe(true);
    expect((await rejection(callTool(itemTool(), { id: 'bad' }))).code).toBe('provider.bad_request');
  });

  it('times out as tool.timeout when the server never answers, and the connection is dropped', async () => {
    server = await startHttpTestServer(() => undefined);
    const clock = new FakeClock();
    const call = rejection(callTool(itemTool({ clock, timeoutMs: 2_000 }), { id: '1' }));
    await vi.waitFor(() => expect(server!.requests).toHaveLength(1), { timeout: 10_000 });
    await clock.advance(2_000);
    const error = await call;
    expect(error.code).toBe('tool.timeout');
    expect(error.message).toBe(`GET ${server.url}/items/1 did not answer within 2000 ms`);
    expect(await server.requests[0]!.closedEarly).toBe(true);
  });

  it('rejects with the caller’s abort reason when the call is cancelled', async () => {
    server = await startHttpTestServer(() => undefined);
    const controller = new AbortController();
    const call = callTool(itemTool(), { id: '1' }, controller.signal).catch((error: unknown) => error);
    await vi.waitFor(() => expect(server!.requests).toHaveLength(1), { timeout: 10_000 });
    const reason = new Error('cancelled');
    controller.abort(reason);
    expect(await call).toBe(reason);
  });

  it('follows redirects, dropping every header but a few safe ones when the origin changes', async () => {
    const other = await startHttpTestServer((_request, response) => sendJson(response, 200, { at: 'other' }));
    try {
      server = await startHttpTestServer((request, response) => {
        response.writeHead(request.url === '/items/1' ? 307 : 302, {
          location: request.url === '/items/1' ? '/moved/1' : `${other.url}/final`,
        });
        response.end();
      });
      const tool = itemTool({
        headers: { authorization: 'Bearer secret', 'x-api-key': 'k', 'x-tenant': 't' },
      });
      const output = await callTool(tool, { id: '1' });
      expect(output.body).toEqual({ at: 'other' });
      expect(server.requests.map((request) => request.url)).toEqual(['/items/1', '/moved/1']);
      expect(server.requests[1]!.headers.authorization).toBe('Bearer secret');
      expect(other.requests[0]!.headers.authorization).toBeUndefined();
      expect(other.requests[0]!.headers['x-api-key']).toBeUndefined();
      expect(other.requests[0]!.headers['x-tenant']).toBeUndefined();
      expect(other.requests[0]!.headers['user-agent']).toBe('keel-tools');
    } finally {
      await other.close();
    }
  });

  it('stops after maxRedirects', async () => {
    server = await startHttpTestServer((_request, response) => {
      response.writeHead(302, { location: '/items/loop' });
      response.end();
    });
    const error = await rejection(callTool(itemTool({ maxRedirects: 2 }), { id: 'loop' }));
    expect(error.code).toBe('tool.failed');
    expect(error.message).toContain('more than 2 redirects');
    expect(server.requests).toHaveLength(3);
  });
});

describe('httpTool: options are checked at creation', () => {
  const base = {
    name: 'checked',
    description: 'Checked',
    input: itemInput,
    url: 'https://api.example.com/items/{id}',
  };

  it.each([
    [{ url: 'ftp://example.com/' }, 'url must be an absolute http: or https: URL'],
    [{ url: 'https://{id}.example.com/' }, 'host and port must be fixed'],
    [{ url: 'https://user:pw@example.com/' }, 'carry no credentials'],
    [{ url: 'https://example.com/a b/{id}' }, 'written in their encoded form'],
    [{ url: 'https://example.com/{missing}' }, 'placeholder {missing} names no property'],
    [{ method: 'GET', body: { a: 1 } }, 'a GET request cannot have a body'],
    [{ method: 'FETCH' }, 'method must be one of'],
    [{ body: { when: new Date() }, method: 'POST' }, 'body.when must be JSON'],
    [{ allow: ['not a host!'] }, 'allow entry'],
    [{ maxRedirects: 21 }, 'maxRedirects must be an integer from 0 to 20'],
    [{ headers: { 'bad header': 'x' } }, 'headers has an invalid name'],
    [{ timeout: 5 }, 'did you mean timeoutMs?'],
  ])('refuses %j', (extra, message) => {
    let thrown: unknown;
    try {
      httpTool({ ...base, ...extra } as HttpToolOptions<unknown>);
    } catch (error) {
      thrown = error;
    }
    expect(KeelError.isInstance(thrown) && thrown.code).toBe('config.invalid');
    expect((thrown as Error).message).toContain(message);
  });

  it('makes GET tools idempotent by default, POST tools not', () => {
    expect(httpTool(base).idempotent).toBe(true);
    expect(httpTool({ ...base, method: 'POST' }).idempotent).toBe(false);
    expect(httpTool({ ...base, method: 'PUT', idempotent: true }).idempotent).toBe(true);
  });
});
