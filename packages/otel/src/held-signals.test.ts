import { agent, type ToolContext, tool } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import type { Meter } from '@opentelemetry/api';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { afterAll, describe, expect, it } from 'vitest';
import { keelMetrics } from './metrics.js';
import { inMemorySdk, pointsOf } from './test-sdk.js';
import { keelTracing } from './tracing.js';

const START_MS = 1_700_000_000_000;

describe('span ends and histogram measurements held during a run', () => {
  const sdk = inMemorySdk();
  afterAll(() => sdk.shutdown());

  it('reach the SDK while the run goes on: measurements at each collection, span ends within a second', async () => {
    const clock = new FakeClock(START_MS);
    let started!: (context: ToolContext) => void;
    const toolStarted = new Promise<ToolContext>((resolve) => {
      started = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const wait = tool({
      name: 'wait',
      description: 'waits until released',
      input: { type: 'object' },
      execute: async (_input, context) => {
        started(context);
        await released;
        return 'done';
      },
    });
    const assistant = agent({
      name: 'holder',
      model: scriptedModel(
        [{ toolCalls: [{ name: 'wait' }], usage: { inputTokens: 3, outputTokens: 2 } }, { content: 'ok' }],
        { provider: 'openai', model: 'gpt-test' },
      ),
      tools: [wait],
      clock,
    });
    const tracing = keelTracing({ tracer: sdk.tracerProvider.getTracer('test') });
    const metrics = keelMetrics({ meter: sdk.meterProvider.getMeter('test') });
    tracing.observe(assistant);
    metrics.observe(assistant);

    const running = assistant.run('go', { runId: 'held' });
    const context = await toolStarted;

    // The first model call ended; a collection now records what was held before it reads the histograms.
    const points = pointsOf(await sdk.collectMetrics(), 'gen_ai.client.token.usage');
    expect(points.map((point) => (point.value as Histogram).sum).sort()).toEqual([2, 3]);

    // Its chat span ended at once on the agent's clock, but is handed to the SDK at the next event a second later.
    expect(sdk.spans.getFinishedSpans().map((span) => span.name)).toEqual([]);
    await clock.advance(1_000);
    context.reportProgress?.({ progress: 1 });
    expect(sdk.spans.getFinishedSpans().map((span) => span.name)).toEqual(['chat gpt-test']);
    expect(sdk.spans.getFinishedSpans()[0]!.endTime).toEqual([START_MS / 1_000, 0]);

    release();
    const result = await clock.runUntilSettled(running);
    expect(result.status).toBe('completed');
    // Everything is handed over by the run's end.
    expect(sdk.spans.getFinishedSpans().map((span) => span.name)).toEqual([
      'chat gpt-test',
      'execute_tool wait',
      'chat gpt-test',
      'invoke_agent holder',
    ]);
  });

  it("cost one listener per observed agent, and reach the SDK by the run's end, each measurement a record of its own", async () => {
    const own = inMemorySdk();
    const real = own.meterProvider.getMeter('one-listener');
    // The real meter, with each histogram's records counted on their way to the SDK.
    let records = 0;
    const meter: Meter = Object.create(real);
    meter.createHistogram = (name, options) => {
      const histogram = real.createHistogram(name, options);
      return {
        record: (value, attributes, context) => {
          records++;
          histogram.record(value, attributes, context);
        },
      };
    };
    const lookup = tool({
      name: 'lookup',
      description: 'looks up',
      input: { type: 'object' },
      execute: () => 'found',
    });
    const assistant = agent({
      name: 'measured',
      model: scriptedModel(
        [
          { toolCalls: [{ name: 'lookup' }], usage: { inputTokens: 3, outputTokens: 2 } },
          { content: 'ok', usage: { inputTokens: 7, outputTokens: 1 } },
        ],
        { provider: 'openai', model: 'gpt-test' },
      ),
      tools: [lookup],
      clock: new FakeClock(START_MS),
    });
    let listeners = 0;
    keelMetrics({ meter }).observe({
      name: assistant.name,
      breakers: assistant.breakers,
      onEvent: (listener) => {
        listeners++;
        return assistant.onEvent(listener);
      },
    });
    expect(listeners).toBe(1);

    expect((await assistant.run('go')).status).toBe('completed');
    // A duration and two token counts per model call (2 calls), the tool call's duration, the run's duration: all
    // handed to the SDK at the run's end, before any collection.
    expect(records).toBe(2 * 3 + 1 + 1);
    const counts = pointsOf(await own.collectMetrics(), 'gen_ai.client.token.usage').map((point) => [
      point.attributes['gen_ai.token.type'],
      (point.value as Histogram).count,
      (point.value as Histogram).sum,
    ]);
    expect(counts.sort()).toEqual([
      ['input', 2, 10],
      ['output', 2, 3],
    ]);
    await own.shutdown();
  });
});
