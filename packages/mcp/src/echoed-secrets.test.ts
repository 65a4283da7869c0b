// An MCP server that echoes the secret it was sent (a variable of its env over stdio, a header over HTTP) in a
// result, a 401 text marked isError, a JSON-RPC error or structured content gets it nowhere: not into the tool
// results the model reads, the run's result, its events, or the run stored in a real SQLite file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { agent, type RunEvent, serializeError } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpServerProcess, startHttpServer } from './fixtures/servers.js';
import { type McpToolset, mcpTools } from './toolset.js';

// No pattern of redactSecrets knows this shape: only the value the toolset sent can find it.
const SECRET = 'zq81c5d7e9a0b2f4h6j8k0m2n4p6r8t0';
const ECHO_SERVER = new URL('./fixtures/echo-secret-server.mjs', import.meta.url).pathname;

let toolset: McpToolset | undefined;
let server: HttpServerProcess | undefined;
let directory: string | undefined;
afterEach(async () => {
  await toolset?.close();
  await server?.stop();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  toolset = undefined;
  server = undefined;
  directory = undefined;
});

/** Runs an agent calling each echoing tool once, with a SQLite store; returns everything keel kept or sent. */
async function runThrough(tools: McpToolset) {
  const model = scriptedModel([
    {
      toolCalls: ['whoami', 'denied', 'rpc_error', 'structured'].map((name) => ({ name, arguments: {} })),
    },
    { content: 'done' },
  ]);
  directory = mkdtempSync(join(tmpdir(), 'keel-mcp-echo-'));
  const store = new SqliteRunStore(join(directory, 'runs.db'));
  const events: RunEvent[] = [];
  try {
    const result = await agent({ model, tools: await tools.tools(), store }).run('Who am I?', {
      onEvent: (event) => events.push(event),
    });
    const stored = JSON.stringify([await store.loadRun(result.runId), await store.ledger(result.runId)]);
    return { model, result, events, stored };
  } finally {
    await store.close();
  }
}

function expectNowhere(outcome: Awaited<ReturnType<typeof runThrough>>): void {
  const { model, result, events, stored } = outcome;
  expect(result.status).toBe('completed');
  const toolMessages = model.calls[1]!.messages.filter((message) => message.role === 'tool');
  expect(toolMessages).toHaveLength(4);
  for (const message of toolMessages) expect(message.content).toContain('[redacted]');
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'tool-call-progress', message: 'using [redacted]' }),
  );
  for (const text of [JSON.stringify(model.calls), JSON.stringify(result), JSON.stringify(events), stored])
    expect(text).not.toContain(SECRET);
  const files = readdirSync(directory!)
    .map((name) => readFileSync(join(directory!, name)).toString('latin1'))
    .join('\n');
  expect(files).not.toContain(SECRET);
}

describe('MCP: a secret the server echoes', () => {
  it('over stdio, a variable of env', async () => {
    toolset = mcpTools({
      command: process.execPath,
      args: [ECHO_SERVER],
      env: { ECHO_SERVICE_TOKEN: SECRET },
    });
    expectNowhere(await runThrough(toolset));
  });

  it('over Streamable HTTP, a header of any name', async () => {
    server = await startHttpServer([ECHO_SERVER, 'http'], { ready: /listening (\d+)/, path: '/mcp' });
    toolset = mcpTools({ url: server.url, headers: { 'x-custom': SECRET } });
    expectNowhere(await runThrough(toolset));
  });

  it('leaves the value of a variable that names no secret alone', async () => {
    toolset = mcpTools({
      command: process.execPath,
      args: [ECHO_SERVER],
      env: { ECHO_SERVICE_TOKEN: SECRET, DATA_DIRECTORY: '/srv/data/reports' },
    });
    const readEnv = (await toolset.tools()).find((tool) => tool.name === 'read_env')!;
    const context = {
      signal: new AbortController().signal,
      idempotencyKey: 'run-1:1:0',
      runId: 'run-1',
      step: 1,
      callIndex: 0,
      attempt: 1,
    };
    expect(await readEnv.execute({ name: 'DATA_DIRECTORY' }, context)).toBe('/srv/data/reports');
    expect(await readEnv.execute({ name: 'ECHO_SERVICE_TOKEN' }, context)).toBe('[redacted]');
  });

  it('a server that prints it on stderr and dies at start: the connection error holds it in no form', async () => {
    toolset = mcpTools({
      command: process.execPath,
      args: [
        '-e',
        'process.stderr.write("bad token " + process.env.ECHO_SERVICE_TOKEN + "\\n"); process.exit(1)',
      ],
      env: { ECHO_SERVICE_TOKEN: SECRET },
    });
    const error = await toolset.tools().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'tool.unavailable' });
    expect(inspect(error, { depth: 10, showHidden: true })).toContain('bad token [redacted]');
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(SECRET);
    expect(JSON.stringify(serializeError(error))).not.toContain(SECRET);
  });
});
