// Servers over HTTP, started by the test as child processes: server-everything over Streamable HTTP and over the
// older SSE transport (reached through the fallback), and the fixture server for headers, lost sessions,
// cancellation and a server killed mid-call.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  EVERYTHING_SERVER,
  FIXTURE_SERVER,
  freePort,
  type HttpServerProcess,
  keelErrorOf,
  startHttpServer,
  toolContext,
} from './fixtures/servers.js';
import type { McpTool } from './mcp-tool.js';
import type { McpProgressEvent } from './options.js';
import { type McpToolset, mcpTools } from './toolset.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-mcp-http-'));
const servers: HttpServerProcess[] = [];
const opened: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((toolset) => toolset.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function everything(mode: 'streamableHttp' | 'sse', port?: number): Promise<HttpServerProcess> {
  const chosen = port ?? (await freePort());
  const server = await startHttpServer([EVERYTHING_SERVER, mode], {
    env: { PORT: String(chosen) },
    ready: /listening on port|running on port/,
    port: chosen,
    path: mode === 'sse' ? '/sse' : '/mcp',
  });
  servers.push(server);
  return server;
}

async function fixtureOverHttp(log: string): Promise<HttpServerProcess> {
  const server = await startHttpServer([FIXTURE_SERVER, 'http'], {
    env: { FIXTURE_LOG: log },
    ready: /listening (\d+)/,
    path: '/mcp',
  });
  servers.push(server);
  return server;
}

function open(options: Parameters<typeof mcpTools>[0]): McpToolset {
  const toolset = mcpTools(options);
  opened.push(toolset);
  return toolset;
}

function named(tools: readonly McpTool[], name: string): McpTool {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

function logEntries(log: string): Record<string, unknown>[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('server-everything over Streamable HTTP', () => {
  it('lists, echoes, adds, reports progress and errors as data', async () => {
    const server = await everything('streamableHttp');
    const progress: McpProgressEvent[] = [];
    const toolset = open({ url: server.url, prefix: 'web', onProgress: (event) => progress.push(event) });
    const tools = await toolset.connect();
    expect(toolset.transport).toBe('streamable-http');
    expect(toolset.pid).toBeUndefined();
    expect(await named(tools, 'web_echo').execute({ message: 'over http' }, toolContext())).toBe(
      'Echo: over http',
    );
    expect(await named(tools, 'web_get-sum').execute({ a: 1, b: 2 }, toolContext())).toBe(
      'The sum of 1 and 2 is 3.',
    );
    expect(
      await named(tools, 'web_trigger-long-running-operation').execute(
        { duration: 0.2, steps: 2 },
        toolContext(),
      ),
    ).toMatch(/completed/);
    expect(progress.map((event) => [event.progress, event.total])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    const invalid = await keelErrorOf(named(tools, 'web_get-sum').execute({ a: 'one' }, toolContext()));
    expect(invalid.code).toBe('tool.invalid_input');
  });

  it('a server killed mid-call ends the call tool.unavailable; the call after its restart reconnects', async () => {
    const port = await freePort();
    const first = await everything('streamableHttp', port);
    let progressed: () => void = () => {};
    const progressSeen = new Promise<void>((resolve) => {
      progressed = resolve;
    });
    const toolset = open({ url: first.url, onProgress: () => progressed(), timeoutMs: 30_000 });
    const tools = await toolset.connect();
    const call = keelErrorOf(
      named(tools, 'trigger-long-running-operation').execute({ duration: 5, steps: 50 }, toolContext()),
    );
    await progressSeen;
    await first.stop();
    const error = await call;
    expect(error.code).toBe('tool.unavailable');
    expect(error.data.phase).toBe('in-flight');

    await everything('streamableHttp', port);
    expect(await named(tools, 'echo').execute({ message: 'back' }, toolContext())).toBe('Echo: back');
    expect(toolset.state).toBe('connected');
  });
});

describe('the SSE fallback', () => {
  it('reaches a server that only speaks SSE, with transport auto', async () => {
    const server = await everything('sse');
    const toolset = open({ url: server.url });
    const tools = await toolset.connect();
    expect(toolset.transport).toBe('sse');
    expect(await named(tools, 'echo').execute({ message: 'old wire' }, toolContext())).toBe('Echo: old wire');
  });

  it('does not fall back when told to speak Streamable HTTP only', async () => {
    const server = await everything('sse');
    const toolset = open({ url: server.url, transport: 'streamable-http' });
    const error = await keelErrorOf(toolset.connect());
    expect(error.code).toBe('tool.unavailable');
    expect(error.data).toMatchObject({ phase: 'connect', transport: 'streamable-http', status: 404 });
  });
});

describe('the fixture server over HTTP', () => {
  it('sends the headers given; a lost session is tool.unavailable and the next call starts a new one', async () => {
    const log = join(directory, 'session.jsonl');
    writeFileSync(log, '');
    const server = await fixtureOverHttp(log);
    const toolset = open({ url: server.url, headers: { 'x-api-key': 'k-123' } });
    const tools = await toolset.connect();
    expect(await named(tools, 'forget_sessions').execute({}, toolContext())).toBe('forgotten');
    const lost = await keelErrorOf(named(tools, 'echo').execute({ text: 'x' }, toolContext()));
    expect(lost).toMatchObject({ code: 'tool.unavailable', retryable: true, status: 404 });
    expect(lost.data.phase).toBe('session-lost');
    expect(await named(tools, 'echo').execute({ text: 'again' }, toolContext())).toBe('again');
    expect(logEntries(log).filter((entry) => 'apiKey' in entry)).toEqual([
      { pid: server.child.pid, apiKey: 'k-123' },
      { pid: server.child.pid, apiKey: 'k-123' },
    ]);
  });

  it('closing the toolset cancels the call in flight and the server is told before the session ends', async () => {
    const log = join(directory, 'cancel.jsonl');
    writeFileSync(log, '');
    const server = await fixtureOverHttp(log);
    let started: () => void = () => {};
    const startedSeen = new Promise<void>((resolve) => {
      started = resolve;
    });
    const toolset = open({ url: server.url, onProgress: () => started() });
    const tools = await toolset.connect();
    const call = keelErrorOf(named(tools, 'hang').execute({}, toolContext()));
    await startedSeen;
    await toolset.close();
    const error = await call;
    expect(error.code).toBe('tool.unavailable');
    expect(error.data.phase).toBe('closed');
    expect(logEntries(log).filter((entry) => 'cancelled' in entry)).toEqual([
      {
        pid: server.child.pid,
        cancelled: expect.objectContaining({ reason: expect.stringMatching(/closed/) }),
      },
    ]);
  });
});
