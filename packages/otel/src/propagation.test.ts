import { agent, MemoryRunStore, tool } from '@keel/core';
import { FakeClock, scriptedModel, sendJson, startHttpTestServer } from '@keel/core/testing';
import { mcpTools } from '@keel/mcp';
import { httpTool } from '@keel/tools';
import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SERVER } from '../../mcp/src/fixtures/servers.js';
import { inMemorySdk, spanNamed, useAsyncContext } from './test-sdk.js';
import { parseTraceparent, traceparentOf } from './trace-headers.js';
import { tracedTools } from './traced-tools.js';
import { keelTracing } from './tracing.js';

const sdk = inMemorySdk();
const tracer = sdk.tracerProvider.getTracer('test');
afterEach(() => sdk.spans.reset());

describe('context propagation into tools', () => {
  let removeContext: () => void;
  beforeAll(() => {
    removeContext = useAsyncContext();
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    propagation.disable();
    removeContext();
  });

  it('sends traceparent of the execute_tool span from an HTTP tool, inside the caller trace', async () => {
    const server = await startHttpTestServer((_request, response) => sendJson(response, 200, { ok: true }));
    try {
      const tracing = keelTracing({ tracer });
      // One tool relies on the active context (what an instrumented client does), one sets the header itself.
      const byContext = tool({
        name: 'fetch_by_context',
        description: 'GETs /a with the active trace context',
        input: { type: 'object', properties: {} },
        execute: async () => {
          const headers: Record<string, string> = {};
          propagation.inject(context.active(), headers);
          await fetch(`${server.url}/a`, { headers });
          return 'a';
        },
      });
      const byHeaders = tool({
        name: 'fetch_by_headers',
        description: 'GETs /b with the call trace headers',
        input: { type: 'object', properties: {} },
        execute: async (_input, toolContext) => {
          await fetch(`${server.url}/b`, { headers: tracing.traceHeaders(toolContext) });
          return 'b';
        },
      });
      const model = scriptedModel([
        {
          toolCalls: [
            { name: 'fetch_by_context', arguments: {} },
            { name: 'fetch_by_headers', arguments: {} },
          ],
        },
        { content: 'done' },
      ]);
      const assistant = agent({
        name: 'fetcher',
        model,
        tools: tracedTools(tracing, [byContext, byHeaders]),
      });
      tracing.observe(assistant);

      const result = await tracer.startActiveSpan('incoming request', async (parent) => {
        const ended = await assistant.run('fetch both');
        parent.end();
        return ended;
      });
      expect(result.status).toBe('completed');

      const spans = sdk.spans.getFinishedSpans();
      const request = spanNamed(spans, 'incoming request');
      const root = spanNamed(spans, 'invoke_agent fetcher');
      expect(root.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(root.spanContext().traceId).toBe(request.spanContext().traceId);
      const sent = Object.fromEntries(server.requests.map((entry) => [entry.url, entry.headers.traceparent]));
      expect(sent['/a']).toBe(traceparentOf(spanNamed(spans, 'execute_tool fetch_by_context').spanContext()));
      expect(sent['/b']).toBe(traceparentOf(spanNamed(spans, 'execute_tool fetch_by_headers').spanContext()));
      expect(parseTraceparent(sent['/a'] as string)?.traceId).toBe(request.spanContext().traceId);
    } finally {
      await server.close();
    }
  });

  it("sends traceparent from keel's own HTTP tool through its headers hook", async () => {
    const server = await startHttpTestServer((_request, response) => sendJson(response, 200, { rooms: 3 }));
    try {
      const tracing = keelTracing({ tracer });
      const rooms = httpTool({
        name: 'free_rooms',
        description: 'Free rooms in a hotel',
        input: { type: 'object', properties: {} },
        url: `${server.url}/rooms`,
        allow: ['127.0.0.1'],
        headers: (_input, toolContext) => tracing.traceHeaders(toolContext),
      });
      const model = scriptedModel([
        { toolCalls: [{ name: 'free_rooms', arguments: {} }] },
        { content: '3 rooms' },
      ]);
      const assistant = agent({ name: 'hotel', model, tools: [rooms] });
      tracing.observe(assistant);
      expect((await assistant.run('Any rooms?')).status).toBe('completed');
      const call = spanNamed(sdk.spans.getFinishedSpans(), 'execute_tool free_rooms');
      expect(server.requests[0]!.headers.traceparent).toBe(traceparentOf(call.spanContext()));
    } finally {
      await server.close();
    }
  });

  it('sends traceparent in the _meta of an MCP tool call', async () => {
    const tracing = keelTracing({ tracer });
    const toolset = mcpTools({
      command: process.execPath,
      args: [FIXTURE_SERVER],
      closeGraceMs: 300,
      meta: (toolContext) => tracing.traceHeaders(toolContext),
    });
    try {
      const model = scriptedModel([{ toolCalls: [{ name: 'meta', arguments: {} }] }, { content: 'done' }]);
      const assistant = agent({ name: 'mcp-user', model, tools: await toolset.tools() });
      tracing.observe(assistant);
      const result = await assistant.run('What meta do you get?');
      expect(result.status).toBe('completed');
      const answered = result.messages.find((message) => message.role === 'tool')!;
      const call = spanNamed(sdk.spans.getFinishedSpans(), 'execute_tool meta');
      expect(call.attributes['gen_ai.tool.name']).toBe('meta');
      // The tool's text answer is the _meta the server received.
      const rendered = JSON.parse(answered.content) as { content: string };
      expect(JSON.parse(rendered.content)).toMatchObject({ traceparent: traceparentOf(call.spanContext()) });
    } finally {
      await toolset.close();
    }
  });

  it('gives no headers and no context for a call it does not trace', () => {
    const tracing = keelTracing({ tracer });
    expect(tracing.traceHeaders({ runId: 'nobody', idempotencyKey: 'nobody:1:0' })).toEqual({});
    expect(tracing.contextOf({ runId: 'nobody', idempotencyKey: 'nobody:1:0' })).toBeUndefined();
  });
});

describe('resumed runs', () => {
  it('links the span of a run resumed by another process to the spans of its earlier attempts', async () => {
    const store = new MemoryRunStore();
    const booking = tool({
      name: 'book_room',
      description: 'Books a hotel room',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      needsApproval: true,
      execute: ({ city }: { city: string }) => `booked in ${city}`,
    });
    // Each "process" has an agent and a tracing of its own; only the store is shared.
    const inProcess = (script: Parameters<typeof scriptedModel>[0]) => {
      const assistant = agent({
        name: 'concierge',
        model: scriptedModel(script),
        tools: [booking],
        store,
        clock: new FakeClock(),
      });
      keelTracing({ tracer }).observe(assistant);
      return assistant;
    };
    const first = await inProcess([{ toolCalls: [{ name: 'book_room', arguments: { city: 'Oslo' } }] }]).run(
      'Book me a room in Oslo',
      { runId: 'run-booking' },
    );
    expect(first.status).toBe('interrupted');
    const key = first.pending![0]!.idempotencyKey;
    const assistant = inProcess([{ content: 'Your room in Oslo is booked.' }]);
    const resumed = await assistant.resume('run-booking', { approvals: { [key]: { approved: true } } });
    expect(resumed.status).toBe('completed');

    const roots = sdk.spans.getFinishedSpans().filter((span) => span.name === 'invoke_agent concierge');
    expect(roots).toHaveLength(2);
    const [interrupted, resumedSpan] = roots as [(typeof roots)[0], (typeof roots)[0]];
    expect(interrupted.attributes).toMatchObject({
      'keel.run.status': 'interrupted',
      'keel.run.stop_reason': 'approval_required',
    });
    expect(interrupted.status.code).toBe(SpanStatusCode.UNSET);
    expect(interrupted.events.map((event) => [event.name, event.attributes])).toEqual([
      ['keel.interrupted', { 'keel.run.stop_reason': 'approval_required', 'error.type': 'run.interrupted' }],
    ]);
    expect(resumedSpan.attributes).toMatchObject({
      'keel.run.resumed': true,
      'keel.run.status': 'completed',
    });
    expect(resumedSpan.links.map((link) => link.context.spanId)).toEqual([interrupted.spanContext().spanId]);
    expect(resumedSpan.links[0]!.attributes).toEqual({ 'keel.link': 'earlier_attempt' });
    expect(trace.getSpanContext(context.active())).toBeUndefined();
  });
});

describe('options', () => {
  it('refuses what it cannot use, with a KeelError that says what to fix', async () => {
    const { keelMetrics } = await import('./metrics.js');
    expect(() => keelTracing({ tracr: tracer } as never)).toThrow(/did you mean tracer/);
    expect(() => keelTracing({ tracer: {} as never })).toThrow(/tracer must be an OpenTelemetry Tracer/);
    expect(() => keelTracing({ recordContent: 'yes' as never })).toThrow(/recordContent must be a boolean/);
    expect(() => keelTracing({ maxContentChars: 0 })).toThrow(/maxContentChars must be a positive integer/);
    expect(() => keelMetrics({ meter: {} as never })).toThrow(/meter must be an OpenTelemetry Meter/);
  });
});

describe('a run cancelled while a model call is in flight', () => {
  it('ends the call span and the run span with run.cancelled', async () => {
    const model = scriptedModel([() => new Promise<never>(() => undefined)]);
    const assistant = agent({ name: 'waiting', model, clock: new FakeClock() });
    keelTracing({ tracer }).observe(assistant);
    const controller = new AbortController();
    const pending = assistant.run('hello?', { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect((await pending).status).toBe('cancelled');
    const spans = sdk.spans.getFinishedSpans();
    const root = spanNamed(spans, 'invoke_agent waiting');
    const chat = spanNamed(spans, 'chat scripted');
    expect(chat.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(chat.attributes['error.type']).toBe('run.cancelled');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(root.attributes).toMatchObject({ 'keel.run.status': 'cancelled', 'error.type': 'run.cancelled' });
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'run.cancelled' });
  });
});

describe('tool progress', () => {
  it('is an event of the tool call span, its message only when contents are recorded', async () => {
    const slow = tool({
      name: 'slow',
      description: 'Reports progress',
      input: { type: 'object', properties: {} },
      execute: (_input, toolContext) => {
        toolContext.reportProgress?.({ progress: 1, total: 2, message: 'half way' });
        return 'done';
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }, { content: 'ok' }]);
    const assistant = agent({ name: 'progress', model, tools: [slow], clock: new FakeClock() });
    keelTracing({ tracer }).observe(assistant);
    await assistant.run('go');
    const call = spanNamed(sdk.spans.getFinishedSpans(), 'execute_tool slow');
    expect(call.events.map((event) => [event.name, event.attributes])).toEqual([
      ['keel.tool.progress', { 'keel.tool.progress': 1, 'keel.tool.progress_total': 2 }],
    ]);
  });
});
