import { agent, type ToolContext, tool } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
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
});
