import { agent, tool } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { faultyAgent } from '../../telemetry/src/test-faulty-agent.js';
import { keelMetrics } from './metrics.js';
import { inMemorySdk, pointsOf, spanNamed } from './test-sdk.js';
import { keelTracing } from './tracing.js';

const START_MS = 1_700_000_000_000;

/** The spans under `parent`, in the order they started (calls of one step by their index). */
const childrenOf = (spans: readonly ReadableSpan[], parent: ReadableSpan) =>
  spans
    .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
    .sort(
      (a, b) =>
        a.startTime[0] - b.startTime[0] ||
        a.startTime[1] - b.startTime[1] ||
        Number(a.attributes['keel.tool.call_index'] ?? -1) -
          Number(b.attributes['keel.tool.call_index'] ?? -1),
    );

describe('keelTracing and keelMetrics on a faulty run', () => {
  const sdk = inMemorySdk();
  afterEach(() => sdk.spans.reset());

  it('records the span tree, the GenAI attributes, keel span events and metric points', async () => {
    const clock = new FakeClock(START_MS);
    const assistant = faultyAgent({ clock });
    const tracing = keelTracing({ tracer: sdk.tracerProvider.getTracer('test') });
    const metrics = keelMetrics({ meter: sdk.meterProvider.getMeter('test') });
    tracing.observe(assistant);
    metrics.observe(assistant);

    const pending = assistant.run('Weather in Paris, and charge the booking', { runId: 'run-faulty' });
    // Both retries wait 250 ms; the breaker stays open for 30 s, so it is still open when metrics are read.
    await clock.advance(1_000);
    const result = await pending;
    expect(result.status).toBe('completed');

    const spans = sdk.spans.getFinishedSpans();
    const root = spanNamed(spans, 'invoke_agent travel');
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'travel',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-primary',
      'keel.run.id': 'run-faulty',
      'keel.run.status': 'completed',
      'keel.run.stop_reason': 'final_answer',
      'gen_ai.usage.input_tokens': 420,
      'gen_ai.usage.output_tokens': 42,
    });
    expect(root.status.code).toBe(SpanStatusCode.UNSET);
    expect(root.startTime).toEqual([START_MS / 1_000, 0]);

    // One chat span per upstream attempt: two failed ones on the primary, two answers from the fallback.
    const children = childrenOf(spans, root);
    expect(children.map((span) => span.name)).toEqual([
      'chat gpt-primary',
      'chat gpt-primary',
      'chat claude-backup',
      'execute_tool get_weather',
      'execute_tool charge_card',
      'chat claude-backup',
    ]);
    const [firstAttempt, secondAttempt, fallbackAnswer] = children;
    for (const [span, attempt] of [
      [firstAttempt!, 1],
      [secondAttempt!, 2],
    ] as const) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-primary',
        'error.type': 'provider.server_error',
        'keel.attempt': attempt,
        'keel.run.step': 1,
      });
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'provider.server_error' });
    }
    expect(fallbackAnswer!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-backup',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'keel.attempt': 1,
    });
    expect(fallbackAnswer!.attributes['error.type']).toBeUndefined();
    expect(fallbackAnswer!.attributes['gen_ai.response.model']).toBe('claude-backup');
    expect(firstAttempt!.attributes['gen_ai.response.model']).toBeUndefined();
    // No content unless asked for.
    expect(spans.some((span) => Object.keys(span.attributes).some((key) => key.includes('messages')))).toBe(
      false,
    );

    const weather = spanNamed(spans, 'execute_tool get_weather');
    expect(weather.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': 'call_weather',
      'keel.tool.idempotency_key': 'run-faulty:1:1',
      'keel.tool.call_index': 1,
    });
    expect(weather.status.code).toBe(SpanStatusCode.UNSET);
    // The tool's retry is an event of its own span.
    expect(weather.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'keel.retry',
        {
          'keel.dependency.kind': 'tool',
          'keel.dependency.name': 'get_weather',
          'keel.retry.attempt': 1,
          'keel.retry.delay_ms': 250,
          'error.type': 'tool.unavailable',
          'keel.run.step': 1,
        },
      ],
    ]);
    const charge = spanNamed(spans, 'execute_tool charge_card');
    expect(charge.attributes['error.type']).toBe('tool.failed');
    expect(charge.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool.failed' });

    expect(root.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'keel.retry',
        {
          'keel.dependency.kind': 'model',
          'keel.dependency.name': 'openai/gpt-primary',
          'keel.retry.attempt': 1,
          'keel.retry.delay_ms': 250,
          'error.type': 'provider.server_error',
          'keel.run.step': 1,
        },
      ],
      ['keel.breaker.opened', { 'keel.dependency.kind': 'model', 'keel.breaker.name': 'openai/gpt-primary' }],
      [
        'keel.fallback',
        {
          'keel.fallback.from': 'openai/gpt-primary',
          'keel.fallback.to': 'anthropic/claude-backup',
          'error.type': 'provider.server_error',
          'keel.run.step': 1,
        },
      ],
      [
        'keel.correction',
        { 'keel.correction.kind': 'unknown_tool', 'keel.run.step': 1, 'gen_ai.tool.name': 'get_wether' },
      ],
    ]);
    // The retry waited 250 ms on the agent's clock, and the span times say so.
    expect(secondAttempt!.startTime).toEqual([START_MS / 1_000, 250_000_000]);

    const points = await sdk.collectMetrics();
    const value = (name: string, attributes: Record<string, unknown>) =>
      pointsOf(points, name).find((point) => JSON.stringify(point.attributes) === JSON.stringify(attributes))
        ?.value;
    expect(pointsOf(points, 'keel.model.requests').map((point) => [point.attributes, point.value])).toEqual([
      [
        {
          'keel.model': 'openai/gpt-primary',
          'keel.outcome': 'error',
          'error.type': 'provider.server_error',
        },
        2,
      ],
      [{ 'keel.model': 'anthropic/claude-backup', 'keel.outcome': 'success' }, 2],
    ]);
    expect(
      value('keel.retries', {
        'keel.dependency.kind': 'model',
        'keel.dependency.name': 'openai/gpt-primary',
        'error.type': 'provider.server_error',
      }),
    ).toBe(1);
    expect(
      value('keel.retries', {
        'keel.dependency.kind': 'tool',
        'keel.dependency.name': 'get_weather',
        'error.type': 'tool.unavailable',
      }),
    ).toBe(1);
    expect(
      value('keel.fallbacks', {
        'keel.fallback.from': 'openai/gpt-primary',
        'keel.fallback.to': 'anthropic/claude-backup',
        'error.type': 'provider.server_error',
      }),
    ).toBe(1);
    expect(value('keel.corrections', { 'keel.correction.kind': 'unknown_tool' })).toBe(1);
    expect(
      value('keel.tool.calls', {
        'gen_ai.tool.name': 'charge_card',
        'keel.outcome': 'error',
        'error.type': 'tool.failed',
      }),
    ).toBe(1);
    expect(value('keel.tool.calls', { 'gen_ai.tool.name': 'get_weather', 'keel.outcome': 'success' })).toBe(
      1,
    );
    expect(
      value('keel.runs', {
        'keel.agent.name': 'travel',
        'keel.run.status': 'completed',
        'keel.run.stop_reason': 'final_answer',
      }),
    ).toBe(1);
    expect(value('keel.runs.active', { 'keel.agent.name': 'travel' })).toBe(0);
    const breaker = {
      'keel.agent.name': 'travel',
      'keel.breaker.name': 'openai/gpt-primary',
      'keel.dependency.kind': 'model',
    };
    expect(value('keel.breaker.transitions', { ...breaker, 'keel.breaker.state': 'open' })).toBe(1);
    expect(value('keel.breaker.state', { ...breaker, 'keel.breaker.state': 'open' })).toBe(1);
    expect(value('keel.breaker.state', { ...breaker, 'keel.breaker.state': 'closed' })).toBe(0);

    const durations = pointsOf(points, 'gen_ai.client.operation.duration');
    expect(durations.map((point) => point.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-primary',
        'error.type': 'provider.server_error',
      },
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-backup',
        'gen_ai.response.model': 'claude-backup',
      },
    ]);
    const histogram = durations[0]!.value as { count: number; buckets: { boundaries: number[] } };
    expect(histogram.count).toBe(2);
    expect(histogram.buckets.boundaries).toEqual([
      0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ]);
    const tokens = pointsOf(points, 'gen_ai.client.token.usage').map((point) => [
      point.attributes['gen_ai.token.type'],
      (point.value as { sum: number; count: number }).sum,
      (point.value as { buckets: { boundaries: number[] } }).buckets.boundaries.length,
    ]);
    expect(tokens).toEqual([
      ['input', 420, 14],
      ['output', 42, 14],
    ]);
  });

  it("records contents only when asked, in the conventions' message shapes, with secrets redacted", async () => {
    const secret = 'sk-proj-Zq7rT3xN9vK2mW8pL4sJ6hF1dG5bC0aE';
    const lookup = tool({
      name: 'lookup',
      description: 'Looks an account up',
      input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      execute: ({ key }: { key: string }) => ({ found: true, echo: `Bearer ${key}` }),
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { key: secret } }] },
      { content: `Your key ${secret} works.` },
    ]);
    const assistant = agent({ name: 'keys', model, tools: [lookup], clock: new FakeClock(START_MS) });
    keelTracing({
      tracer: sdk.tracerProvider.getTracer('test'),
      recordContent: true,
      maxContentChars: 200,
    }).observe(assistant);
    await assistant.run(`My key is ${secret}, check it`);

    const spans = sdk.spans.getFinishedSpans();
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.events]))).not.toContain(secret);
    const [ask, answer] = spans.filter((span) => span.name === 'chat scripted');
    expect(JSON.parse(String(ask!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'My key is [redacted], check it' }] },
    ]);
    expect(JSON.parse(String(ask!.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'lookup', arguments: { key: '[redacted]' } }],
        finish_reason: 'tool_calls',
      },
    ]);
    const sent = JSON.parse(String(answer!.attributes['gen_ai.input.messages'])) as { role: string }[];
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    const call = spanNamed(spans, 'execute_tool lookup');
    expect(call.attributes['gen_ai.tool.call.arguments']).toBe('{"key":"[redacted]"}');
    expect(call.attributes['gen_ai.tool.call.result']).toBe('{"found":true,"echo":"Bearer [redacted]"}');
  });

  it('removes the known keys of unusual shape (gsk_, 32-hex, short sk-) from recorded content', async () => {
    // No credential pattern knows these shapes: only their values, given as `secrets`, find them.
    const keys = [
      'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz',
      '9f86d081884c7d659a2feaa0c55ad015',
      'sk-4f9Qz1ab',
    ];
    const lookup = tool({
      name: 'lookup',
      description: 'Looks an account up',
      input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      execute: ({ key }: { key: string }) => ({ found: true, echo: `key=${key}`, hex: keys[1] }),
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { key: keys[0] } }] },
      { content: `Your keys ${keys.join(' and ')} work.` },
    ]);
    const assistant = agent({ name: 'keys', model, tools: [lookup], clock: new FakeClock(START_MS) });
    keelTracing({
      tracer: sdk.tracerProvider.getTracer('test'),
      recordContent: true,
      secrets: [...keys, undefined],
    }).observe(assistant);
    await assistant.run(`My keys: ${keys.join(', ')}`);

    const recorded = JSON.stringify(
      sdk.spans.getFinishedSpans().map((span) => [span.name, span.attributes, span.events]),
    );
    for (const key of keys) expect(recorded).not.toContain(key);
    expect(recorded).toContain('My keys: [redacted], [redacted], [redacted]');
  });
});
