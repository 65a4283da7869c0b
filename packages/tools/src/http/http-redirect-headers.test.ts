// A redirect to another origin carries none of the tool's headers but a few that cannot hold a credential: a key in a
// header of any name (`x-custom`), the idempotency key and trace context stay with the origin the tool was made for.
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../test-support.js';
import { httpTool } from './http-tool.js';

const SECRET = 'zq81c5d7e9a0b2f4h6j8k0m2n4p6r8t0';
let servers: HttpTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function start(handler: Parameters<typeof startHttpTestServer>[0]): Promise<HttpTestServer> {
  const server = await startHttpTestServer(handler);
  servers.push(server);
  return server;
}

describe('httpTool: a redirect to another origin', () => {
  it.each([
    [307, 'POST'],
    [308, 'POST'],
    [302, 'GET'],
    [303, 'GET'],
  ] as const)('after a %i, the other origin receives no secret header', async (status, method) => {
    // Another port of 127.0.0.1 is another origin.
    const other = await start((_request, response) => sendJson(response, 200, { at: 'other' }));
    const allowed = await start((_request, response) => {
      response.writeHead(status, { location: `${other.url}/final` });
      response.end();
    });
    const tool = httpTool({
      name: 'create_item',
      description: 'Creates an item',
      input: { type: 'object', properties: { title: { type: 'string' } } },
      method: 'POST',
      url: `${allowed.url}/items`,
      body: { title: '{title}' },
      headers: {
        'x-custom': SECRET,
        'x-api-key': SECRET,
        authorization: `Bearer ${SECRET}`,
        cookie: `session=${SECRET}`,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
      allow: ['127.0.0.1'],
    });
    const output = await callTool(tool, { title: 'a' });
    expect(output.body).toEqual({ at: 'other' });
    expect(allowed.requests[0]!.headers['x-custom']).toBe(SECRET);
    const received = other.requests[0]!;
    expect(received.method).toBe(method);
    expect(JSON.stringify(received.headers)).not.toContain(SECRET);
    expect(Object.keys(received.headers).sort()).toEqual(
      [
        'accept',
        'connection',
        'host',
        'user-agent',
        ...(method === 'POST' ? ['content-length', 'content-type'] : []),
      ].sort(),
    );
  });
});
