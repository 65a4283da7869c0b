// The HTTP tool's reconcile over a real server on 127.0.0.1: a POST whose connection drops after the service acted is
// an unknown outcome; the model's repeat is answered by the configured lookup (200: it happened, 404: it did not).
import { agent } from '@keel/core';
import { type HttpTestServer, scriptedModel, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { httpTool } from './http-tool.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A ticket service: POST /tickets opens one under its Idempotency-Key, GET /tickets?key= looks one up. */
function ticketService(options: { dropFirstAnswer: boolean; actBeforeDrop: boolean }) {
  const tickets = new Map<string, { id: string; title: string }>();
  let posts = 0;
  const handler = (
    request: { method: string; url: string; headers: Record<string, unknown>; body: string },
    response: import('node:http').ServerResponse,
  ) => {
    const url = new URL(request.url, 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/tickets') {
      const found = tickets.get(url.searchParams.get('key') ?? '');
      return found === undefined
        ? sendJson(response, 404, { error: 'no such ticket' })
        : sendJson(response, 200, found);
    }
    posts++;
    const key = String(request.headers['idempotency-key']);
    const ticket = {
      id: `T-${tickets.size + 1}`,
      title: (JSON.parse(request.body) as { title: string }).title,
    };
    if (posts > 1 || options.actBeforeDrop) tickets.set(key, ticket);
    // The service acted (or not), and the connection drops before its answer is sent.
    if (posts === 1 && options.dropFirstAnswer) return void response.socket?.destroy();
    sendJson(response, 201, ticket);
  };
  return { tickets, handler, posts: () => posts };
}

function ticketTool(url: string, reconcile = true) {
  return httpTool({
    name: 'create_ticket',
    description: 'Opens a ticket',
    input: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    method: 'POST',
    url: `${url}/tickets`,
    body: { title: '{title}' },
    allow: ['127.0.0.1'],
    ...(reconcile ? { reconcile: { url: `${url}/tickets?key={idempotencyKey}` } } : {}),
  });
}

const CALL = { toolCalls: [{ name: 'create_ticket', arguments: { title: 'Printer on fire' } }] };

describe('httpTool reconcile', () => {
  it.each([
    [true, 'answers the repeat from the lookup (200), sending no second POST'],
    [false, 'sends the repeat once when the lookup says 404'],
  ])('after a dropped connection (the service acted: %s), %s', async (acted) => {
    const service = ticketService({ dropFirstAnswer: true, actBeforeDrop: acted });
    server = await startHttpTestServer(service.handler as never);
    const model = scriptedModel([CALL, CALL, { content: 'done' }]);
    const assistant = agent({ model, tools: [ticketTool(server.url)] });
    const result = await assistant.run('Open a ticket');

    expect(result.status).toBe('completed');
    expect(service.tickets.size).toBe(1);
    const first = JSON.parse(model.calls[1]!.messages.at(-1)!.content as string);
    expect(first).toMatchObject({
      status: 'error',
      error: { code: 'tool.outcome_unknown', retryable: false },
    });
    const repeat = JSON.parse(model.calls[2]!.messages.at(-1)!.content as string);
    expect(repeat).toMatchObject({
      status: 'success',
      content: { body: { id: 'T-1', title: 'Printer on fire' } },
    });
    expect(service.posts()).toBe(acted ? 1 : 2);
    expect(result.report.uncertainCalls).toMatchObject({ total: 1, reconciled: 1, blocked: 0 });
  });

  it('checks the lookup template: placeholders name input properties or {idempotencyKey}', () => {
    expect(() =>
      httpTool({
        name: 'create_ticket',
        description: 'Opens a ticket',
        input: { type: 'object', properties: { title: { type: 'string' } } },
        method: 'POST',
        url: 'https://api.example.com/tickets',
        reconcile: { url: 'https://api.example.com/tickets/{ticketId}' },
      }),
    ).toThrow(/placeholder \{ticketId\} names no property/);
    expect(() =>
      httpTool({
        name: 'create_ticket',
        description: 'Opens a ticket',
        input: { type: 'object', properties: { title: { type: 'string' } } },
        method: 'POST',
        url: 'https://api.example.com/tickets',
        reconcile: { url: 'https://api.example.com/tickets', method: 'POST' as never },
      }),
    ).toThrow(/reconcile.method must be GET or HEAD/);
  });
});
