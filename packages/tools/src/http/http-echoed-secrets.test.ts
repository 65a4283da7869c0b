// An endpoint that echoes the token it was sent (a 401 text, a 500 JSON, a 200 body) gets it nowhere: not into the
// tool result the model reads, the run's result, its events, or the run stored in a real SQLite file.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type RunEvent } from '@keel/core';
import { type HttpTestServer, scriptedModel, sendJson, startHttpTestServer } from '@keel/core/testing';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { httpTool } from './http-tool.js';

// No pattern of redactSecrets knows this shape: only the value the tool sent can find it.
const TOKEN = 'zq81c5d7e9a0b2f4h6j8k0m2n4p6r8t0';
let server: HttpTestServer | undefined;
let directory: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

/** Every way the token may come back: raw, in JSON, URL-encoded, in base64. */
function echo(path: string, sent: string): { status: number; body: string; type: string } {
  switch (path) {
    case '/items/401':
      return { status: 401, type: 'text/plain', body: `401 Unauthorized: the token ${sent} is not valid` };
    case '/items/500':
      return {
        status: 500,
        type: 'application/json',
        body: JSON.stringify({ error: { message: `failed for ${sent}`, received: { 'x-custom': sent } } }),
      };
    default:
      return {
        status: 200,
        type: 'application/json',
        body: JSON.stringify({
          [sent]: 'a key',
          you_sent: sent,
          encoded: encodeURIComponent(`Bearer ${sent}`),
          base64: Buffer.from(sent).toString('base64'),
        }),
      };
  }
}

function everything(directoryPath: string): string {
  return readdirSync(directoryPath)
    .map((name) => readFileSync(join(directoryPath, name)).toString('latin1'))
    .join('\n');
}

describe('httpTool: a token the endpoint echoes', () => {
  it('reaches neither the model, the result, the events nor the SQLite store', async () => {
    server = await startHttpTestServer((request, response) => {
      const reply = echo(request.url, String(request.headers['x-custom']));
      response.writeHead(reply.status, { 'content-type': reply.type });
      response.end(reply.body);
    });
    const getItem = httpTool({
      name: 'get_item',
      description: 'Reads an item',
      input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      url: `${server.url}/items/{id}`,
      // As the CLI fills a header from { env: TRACKER_API_KEY }: a value the tool sends, under any name.
      headers: { 'x-custom': TOKEN, authorization: `Bearer ${TOKEN}` },
      idempotent: false,
      allow: ['127.0.0.1'],
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'get_item', arguments: { id: '401' } },
          { name: 'get_item', arguments: { id: '500' } },
          { name: 'get_item', arguments: { id: '200' } },
        ],
      },
      { content: 'done' },
    ]);
    directory = mkdtempSync(join(tmpdir(), 'keel-http-echo-'));
    const store = new SqliteRunStore(join(directory, 'runs.db'));
    const events: RunEvent[] = [];
    try {
      const result = await agent({ model, tools: [getItem], store }).run('Read the items', {
        onEvent: (event) => events.push(event),
      });
      expect(result.status).toBe('completed');
      expect(server.requests.map((request) => request.headers['x-custom'])).toEqual([TOKEN, TOKEN, TOKEN]);
      const toolMessages = model.calls[1]!.messages.filter((message) => message.role === 'tool');
      expect(toolMessages).toHaveLength(3);
      expect(toolMessages.map((message) => message.content).join('\n')).toContain('[redacted]');
      expect(JSON.stringify(model.calls)).not.toContain(TOKEN);
      expect(JSON.stringify(result)).not.toContain(TOKEN);
      expect(JSON.stringify(events)).not.toContain(TOKEN);
      expect(JSON.stringify(await store.loadRun(result.runId))).not.toContain(TOKEN);
      expect(JSON.stringify(await store.ledger(result.runId))).not.toContain(TOKEN);
    } finally {
      await store.close();
    }
    // The database's own bytes (and its write-ahead log) hold it in no form either.
    const bytes = everything(directory);
    expect(bytes.length).toBeGreaterThan(0);
    for (const form of [TOKEN, Buffer.from(TOKEN).toString('base64').replace(/=+$/, '')])
      expect(bytes).not.toContain(form);
  });

  it('leaves values filled from the input alone: they are not secrets', async () => {
    server = await startHttpTestServer((request, response) =>
      sendJson(response, 200, { tenant: request.headers['x-tenant'] }),
    );
    const tool = httpTool({
      name: 'get_tenant',
      description: 'Reads a tenant',
      input: { type: 'object', properties: { tenant: { type: 'string' } }, required: ['tenant'] },
      url: `${server.url}/tenant`,
      headers: { 'x-tenant': '{tenant}', 'x-custom': TOKEN },
      allow: ['127.0.0.1'],
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'get_tenant', arguments: { tenant: 'acme-corporation' } }] },
      { content: 'done' },
    ]);
    await agent({ model, tools: [tool] }).run('Which tenant?');
    expect(model.calls[1]!.messages.at(-1)!.content).toContain('acme-corporation');
  });
});
