// Command and HTTP tools inside a real agent run (a scripted model; real child processes and a real HTTP server).
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type Message } from '@keel/core';
import {
  FakeClock,
  type HttpTestServer,
  scriptedModel,
  sendJson,
  startHttpTestServer,
} from '@keel/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandTool } from './command/command-tool.js';
import { httpTool } from './http/http-tool.js';

let server: HttpTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const idInput = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

function toolMessages(messages: readonly Message[]): unknown[] {
  return messages
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse((message as { content: string }).content));
}

describe('tools in an agent run', () => {
  it('retries an idempotent HTTP tool after a 429, waiting what Retry-After asks', async () => {
    server = await startHttpTestServer((request, response) =>
      request.index === 1
        ? sendJson(response, 429, { error: 'slow down' }, { 'retry-after': '2' })
        : sendJson(response, 200, { id: 'A-1', state: 'open' }),
    );
    const clock = new FakeClock();
    const getItem = httpTool({
      name: 'get_item',
      description: 'Reads an item',
      input: idInput,
      url: `${server.url}/items/{id}`,
      allow: ['127.0.0.1'],
      clock,
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_item', arguments: { id: 'A-1' } }] },
      { content: 'A-1 is open.' },
    ]);
    const run = agent({ model, tools: [getItem], clock }).run('State of A-1?');
    await vi.waitFor(() => expect(server!.requests).toHaveLength(1), { timeout: 10_000 });
    await clock.advance(2_000);
    const result = await run;

    expect(result.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
    expect(result.report.retries.tool).toBe(1);
    expect(result.report.waitingMs).toBe(2_000);
    expect(toolMessages(result.messages)).toEqual([
      {
        status: 'success',
        content: { status: 200, contentType: 'application/json', body: { id: 'A-1', state: 'open' } },
      },
    ]);
  });

  it('shows a 404 to the model as an error result carrying the body, and goes on', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 404, { error: 'no such item' }),
    );
    const getItem = httpTool({
      name: 'get_item',
      description: 'Reads an item',
      input: idInput,
      url: `${server.url}/items/{id}`,
      allow: ['127.0.0.1'],
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_item', arguments: { id: 'nope' } }] },
      { content: 'There is no such item.' },
    ]);
    const result = await agent({ model, tools: [getItem], clock: new FakeClock() }).run('Item nope?');

    expect(result.status).toBe('completed');
    expect(server.requests).toHaveLength(1);
    expect(result.report.toolCalls.errorsByCode).toEqual({ 'provider.not_found': 1 });
    expect(toolMessages(result.messages)).toEqual([
      {
        status: 'error',
        error: {
          code: 'provider.not_found',
          message: `GET ${server.url}/items/nope answered 404 Not Found`,
          retryable: false,
          data: { status: 404, body: { error: 'no such item' } },
        },
        guidance: 'Nothing was found there: check the identifiers you gave.',
      },
    ]);
  });

  it('answers a failing HTTP tool from its fallback, marked degraded, and counts it', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 503, { error: 'maintenance' }),
    );
    const getItem = httpTool({
      name: 'get_item',
      description: 'Reads an item',
      input: idInput,
      url: `${server.url}/items/{id}`,
      allow: ['127.0.0.1'],
      fallbacks: [
        { name: 'item_cache', value: ({ id }: { id: string }) => ({ id, state: 'open (cached)' }) },
      ],
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_item', arguments: { id: 'A-1' } }] },
      { content: 'A-1 was open when last cached.' },
    ]);
    const result = await agent({
      model,
      tools: [getItem],
      clock: new FakeClock(),
      retry: { toolMaxAttempts: 1 },
    }).run('State of A-1?');

    expect(result.status).toBe('completed');
    expect(result.report.degradations).toEqual({ total: 1, byTool: { get_item: 1 } });
    expect(toolMessages(result.messages)).toEqual([
      {
        status: 'success',
        content: { id: 'A-1', state: 'open (cached)' },
        degraded: {
          from: 'get_item',
          to: 'item_cache',
          errorCode: 'provider.overloaded',
          reason: `get_item failed (provider.overloaded: GET ${server.url}/items/A-1 answered 503 Service Unavailable); this result comes from item_cache instead and may be incomplete or out of date.`,
        },
      },
    ]);
  });

  it('runs a command tool, and shows a hostile argument’s refusal to the model as data', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-agent-command-')));
    try {
      const show = commandTool({
        name: 'show_ref',
        description: 'Prints a reference name',
        input: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
        command: ['printf', '%s', '{ref}'],
        root,
      });
      const model = scriptedModel([
        { toolCalls: [{ name: 'show_ref', arguments: { ref: '--output=/etc/passwd' } }] },
        { toolCalls: [{ name: 'show_ref', arguments: { ref: 'main; rm -rf /' } }] },
        { content: 'Done.' },
      ]);
      const result = await agent({ model, tools: [show], clock: new FakeClock() }).run('Show refs');

      expect(result.status).toBe('completed');
      const [refused, printed] = toolMessages(result.messages) as [
        { status: string; error: { code: string } },
        { status: string; content: unknown },
      ];
      expect(refused.status).toBe('error');
      expect(refused.error.code).toBe('tool.invalid_input');
      expect(printed).toEqual({
        status: 'success',
        content: { exitCode: 0, stdout: 'main; rm -rf /', stderr: '' },
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
