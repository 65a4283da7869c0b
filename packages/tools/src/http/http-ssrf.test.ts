// The SSRF guard against hostile targets, one per test, with real servers on loopback that must never be reached.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, rejection } from '../test-support.js';
import type { HostResolver } from './guarded-lookup.js';
import { type HttpToolOptions, httpTool } from './http-tool.js';

let server: HttpTestServer;

beforeEach(async () => {
  server = await startHttpTestServer((request, response) =>
    sendJson(response, 200, { reached: request.url }),
  );
});

afterEach(async () => {
  await server.close();
});

const pathInput = { type: 'object', properties: { path: { type: 'string' } } } as const;

function fetchTool(url: string, extra: Partial<HttpToolOptions<unknown>> = {}) {
  return httpTool({ name: 'fetch_page', description: 'Fetches a page', input: pathInput, url, ...extra });
}

/** A resolver answering from a table, counting its calls. */
function resolverOf(table: Record<string, string[] | (() => string[])>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const entry = table[hostname];
    const addresses = typeof entry === 'function' ? entry() : (entry ?? []);
    return addresses.map((address) => ({
      address,
      family: address.includes(':') ? (6 as const) : (4 as const),
    }));
  };
  return Object.assign(resolve, { calls });
}

describe('httpTool SSRF guard', () => {
  it('refuses http://127.0.0.1 by default; the server is never reached', async () => {
    const error = await rejection(callTool(fetchTool(`${server.url}/admin`), {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(error.message).toBe('Refused to connect to 127.0.0.1: a loopback address');
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses the cloud metadata address 169.254.169.254', async () => {
    const error = await rejection(callTool(fetchTool('http://169.254.169.254/latest/meta-data/iam/'), {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(error.data).toMatchObject({ address: '169.254.169.254', range: 'cloud metadata' });
  });

  it('refuses http://[::1] (IPv6 loopback); a server listening there is never reached', async () => {
    const { server: ipv6, port, hits } = await listenOnIpv6Loopback();
    try {
      const error = await rejection(callTool(fetchTool(`http://[::1]:${port}/`), {}));
      expect(error.code).toBe('tool.permission_denied');
      expect(error.data).toMatchObject({ range: 'loopback' });
      expect(hits()).toBe(0);
    } finally {
      await new Promise((resolve) => ipv6.close(resolve));
    }
  });

  it('refuses loopback written as an IPv4-mapped IPv6 address', async () => {
    const error = await rejection(callTool(fetchTool(`http://[::ffff:127.0.0.1]:${server.port}/`), {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(server.requests).toHaveLength(0);
  });

  it.each(['2130706433', '0x7f.1', '127.1', '0.0.0.0'])(
    'refuses loopback written as http://%s (the URL parser normalises it first)',
    async (host) => {
      const error = await rejection(callTool(fetchTool(`http://${host}:${server.port}/`), {}));
      expect(error.code).toBe('tool.permission_denied');
      expect(server.requests).toHaveLength(0);
    },
  );

  it('refuses a DNS name that resolves to a private address', async () => {
    const resolveHost = resolverOf({ 'intranet.example.com': ['10.20.30.40'] });
    const error = await rejection(callTool(fetchTool('http://intranet.example.com/', { resolveHost }), {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(error.message).toBe(
      'Refused to connect to intranet.example.com: it resolves to 10.20.30.40, a private (RFC 1918) address',
    );
  });

  it('refuses "localhost" through the system resolver', async () => {
    const error = await rejection(callTool(fetchTool(`http://localhost:${server.port}/`), {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(error.data).toMatchObject({ host: 'localhost', range: 'loopback' });
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a name with one public and one private address (no gamble on which one is used)', async () => {
    const resolveHost = resolverOf({ 'mixed.example.com': ['93.184.215.14', '127.0.0.1'] });
    const tool = fetchTool(`http://mixed.example.com:${server.port}/`, { resolveHost });
    const error = await rejection(callTool(tool, {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a redirect to an internal address; the internal target is never reached', async () => {
    const internal = await startHttpTestServer((_request, response) =>
      sendJson(response, 200, { secret: true }),
    );
    try {
      const redirector = await startHttpTestServer((_request, response) => {
        response.writeHead(302, { location: `${internal.url}/secret` });
        response.end();
      });
      try {
        // The first hop is allowed by name; the redirect goes to an address nobody allowed.
        const resolveHost = resolverOf({ 'public.example.com': ['127.0.0.1'] });
        const tool = fetchTool(`http://public.example.com:${redirector.port}/start`, {
          resolveHost,
          allow: ['public.example.com'],
        });
        const error = await rejection(callTool(tool, {}));
        expect(error.code).toBe('tool.permission_denied');
        expect(redirector.requests).toHaveLength(1);
        expect(internal.requests).toHaveLength(0);
      } finally {
        await redirector.close();
      }
    } finally {
      await internal.close();
    }
  });

  it('refuses a redirect to a name that resolves to the metadata address', async () => {
    const redirector = await startHttpTestServer((_request, response) => {
      response.writeHead(301, { location: 'http://metadata.example.com/computeMetadata/v1/' });
      response.end();
    });
    try {
      const resolveHost = resolverOf({ 'metadata.example.com': ['169.254.169.254'] });
      const tool = fetchTool(`${redirector.url}/start`, { resolveHost, allow: ['127.0.0.1'] });
      const error = await rejection(callTool(tool, {}));
      expect(error.code).toBe('tool.permission_denied');
      expect(error.data).toMatchObject({ host: 'metadata.example.com', range: 'cloud metadata' });
    } finally {
      await redirector.close();
    }
  });

  it('refuses a redirect to a file: URL', async () => {
    const redirector = await startHttpTestServer((_request, response) => {
      response.writeHead(302, { location: 'file:///etc/passwd' });
      response.end();
    });
    try {
      const error = await rejection(callTool(fetchTool(`${redirector.url}/`, { allow: ['127.0.0.1'] }), {}));
      expect(error.code).toBe('tool.permission_denied');
      expect(error.message).toContain('refused a redirect to a file: URL');
    } finally {
      await redirector.close();
    }
  });

  it('connects to the address it checked: a DNS answer that changes later cannot slip through', async () => {
    // The first answer is an allowed address; every later one is private. A guard that resolved once to check and
    // again to connect would connect to the second answer.
    let answers = 0;
    const resolveHost = resolverOf({
      'rebind.example.com': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.0.0.1']),
    });
    const closing = await startHttpTestServer((_request, response) =>
      sendJson(response, 200, { ok: true }, { connection: 'close' }),
    );
    try {
      const tool = fetchTool(`http://rebind.example.com:${closing.port}/`, {
        resolveHost,
        allow: ['127.0.0.1'],
      });
      expect((await callTool(tool, {})).body).toEqual({ ok: true });
      expect(resolveHost.calls).toEqual(['rebind.example.com']);
      // The next connection resolves again, gets the private answer, and is refused before connecting.
      const error = await rejection(callTool(tool, {}));
      expect(error.code).toBe('tool.permission_denied');
      expect(error.data).toMatchObject({ address: '10.0.0.1' });
      expect(closing.requests).toHaveLength(1);
    } finally {
      await closing.close();
    }
  });

  it('reaches an internal address the allowlist names', async () => {
    const output = await callTool(fetchTool(`${server.url}/health`, { allow: ['127.0.0.0/8'] }), {});
    expect(output.body).toEqual({ reached: '/health' });
  });

  it('does not reuse a connection another tool opened under a wider allowlist', async () => {
    const resolveHost = resolverOf({ 'shared.example.com': ['127.0.0.1'] });
    const url = `http://shared.example.com:${server.port}/`;
    const trusted = fetchTool(url, { resolveHost, allow: ['shared.example.com'] });
    const untrusted = fetchTool(url, { resolveHost });
    expect((await callTool(trusted, {})).status).toBe(200);
    const error = await rejection(callTool(untrusted, {}));
    expect(error.code).toBe('tool.permission_denied');
    expect(server.requests).toHaveLength(1);
  });
});

async function listenOnIpv6Loopback(): Promise<{ server: Server; port: number; hits: () => number }> {
  let count = 0;
  const ipv6 = createServer((_request, response) => {
    count++;
    response.end('reached');
  });
  await new Promise<void>((resolve, reject) => {
    ipv6.once('error', reject);
    ipv6.listen(0, '::1', resolve);
  });
  return { server: ipv6, port: (ipv6.address() as AddressInfo).port, hits: () => count };
}
