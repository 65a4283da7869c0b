// The subjects of bench:telemetry, each made in a process of its own by measureIsolated (fair.ts): one agent with
// telemetry off, off again (a second process alike: the noise floor), run events to an empty listener, tracing and
// metrics on the OpenTelemetry API's no-op tracer and meter, and on the real SDK (tracing alone, metrics alone, both)
// exporting to its in-memory exporters. In one process their heaps would be one: the SDK's spans and metric points,
// and the garbage of making them, collected in the blocks of telemetry off. The model is behind the OpenAI-wire server
// at KEEL_BENCH_MODEL_URL (over HTTP, as a user's run makes its steps), or in process when it is unset. A unit is one
// run of TELEMETRY_STEPS steps.
import { type Agent, agent } from '@keel/core';
import { openaiCompatible } from '@keel/openai';
import { keelMetrics, keelTracing } from '@keel/otel';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { lookupTool, stepModel } from './step-agent.js';

/** Steps of each run: a `lookup` call a step until the last, then the answer (the server's brain does the same). */
export const TELEMETRY_STEPS = 10;

/** One run of the agent, failing loudly when it does not complete. */
function runnerOf(subject: Agent): () => Promise<void> {
  return async () => {
    const result = await subject.run('go');
    if (result.status !== 'completed')
      throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
  };
}

function newAgent(): Agent {
  const url = process.env.KEEL_BENCH_MODEL_URL;
  const model =
    url === undefined || url === ''
      ? stepModel(TELEMETRY_STEPS)
      : openaiCompatible({ baseUrl: url, model: 'steps', provider: 'simulated' });
  return agent({ model, tools: [lookupTool], limits: { maxTurns: TELEMETRY_STEPS + 2 } });
}

/** The SDK as an application sets it up: a batch span processor and a periodic metric reader, in memory. */
function sdk() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: 65_536, scheduledDelayMillis: 200 })],
  });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 1_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return { tracer: tracerProvider.getTracer('bench'), meter: meterProvider.getMeter('bench'), spans };
}

/**
 * Runs `subject`, dropping what the in-memory exporter holds every 20 runs, as an exporter that sends spans away
 * would. With `spans`, a subject that traces: it fails when its SDK has exported no span after a second, so that a
 * subject measured cheap because it recorded nothing cannot pass unseen.
 */
function withDrops(subject: Agent, spans: InMemorySpanExporter, traces: boolean): () => Promise<void> {
  const run = runnerOf(subject);
  const startedAtMs = Date.now();
  let runs = 0;
  let exported = 0;
  let checked = !traces;
  return async () => {
    await run();
    if (++runs % 20 !== 0) return;
    exported += spans.getFinishedSpans().length;
    spans.reset();
    if (!checked && Date.now() - startedAtMs > 1_000) {
      if (exported === 0) throw new Error('the SDK exported no span in a second of runs');
      checked = true;
    }
  };
}

export function telemetryOff(): () => Promise<void> {
  return runnerOf(newAgent());
}

export function telemetryEvents(): () => Promise<void> {
  const subject = newAgent();
  subject.onEvent(() => undefined);
  return runnerOf(subject);
}

export function telemetryNoop(): () => Promise<void> {
  const subject = newAgent();
  keelTracing().observe(subject);
  keelMetrics().observe(subject);
  return runnerOf(subject);
}

export function telemetryTracing(): () => Promise<void> {
  const { tracer, spans } = sdk();
  const subject = newAgent();
  keelTracing({ tracer }).observe(subject);
  return withDrops(subject, spans, true);
}

export function telemetryMetrics(): () => Promise<void> {
  const { meter, spans } = sdk();
  const subject = newAgent();
  keelMetrics({ meter }).observe(subject);
  return withDrops(subject, spans, false);
}

export function telemetrySdk(): () => Promise<void> {
  const { tracer, meter, spans } = sdk();
  const subject = newAgent();
  keelTracing({ tracer }).observe(subject);
  keelMetrics({ meter }).observe(subject);
  return withDrops(subject, spans, true);
}
