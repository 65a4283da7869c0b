import { describe, expect, it } from 'vitest';
import { closedPort, sendJson, startHttpTestServer, startSse, writeSse } from './http-test-server.js';

describe('startHttpTestServer', () => {
  it('records requests with their bodies and answers JSON', async () => {
    const server = await startHttpTestServer((request, response) =>
      sendJson(response, 201, { echo: request.json() }, { 'x-test': '1' }),
    );
    try {
      const response = await fetch(`${server.url}/path?q=1`, { method: 'POST', body: '{"a":1}' });
      expect(response.status).toBe(201);
      expect(response.headers.get('x-test')).toBe('1');
      expect(await response.json()).toEqual({ echo: { a: 1 } });
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]).toMatchObject({
        method: 'POST',
        url: '/path?q=1',
        body: '{"a":1}',
        index: 1,
      });
      expect(await server.requests[0]!.closedEarly).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('streams server-sent events, answers 500 when the handler throws, and refuses connections once closed', async () => {
    const server = await startHttpTestServer((request, response) => {
      if (request.url === '/boom') throw new Error('handler bug');
      startSse(response);
      writeSse(response, [{ event: 'greeting', data: { hello: 'world' } }, { data: '[DONE]' }]);
      response.end();
    });
    const events = await (await fetch(`${server.url}/sse`)).text();
    expect(events).toBe('event: greeting\ndata: {"hello":"world"}\n\ndata: [DONE]\n\n');
    const failed = await fetch(`${server.url}/boom`);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toContain('handler bug');
    await server.close();
    await expect(fetch(server.url)).rejects.toThrow();
    const port = await closedPort();
    await expect(fetch(`http://127.0.0.1:${port}`)).rejects.toThrow();
  });
});
