// What each piece of a step's telemetry costs in the OpenTelemetry SDK itself, in process: a span started and ended
// (without attributes, and with a chat span's start attributes), one attribute given at the start or set later, a
// histogram record with as many attributes as keel's histograms carry. The SDK calls alone, with the attribute objects keel passes (made once and
// reused), measured the way fair.ts says; the figures the README's cost table breaks a step down into. Part of
// `npm run bench:telemetry` (telemetry.ts).

import { type Attributes, type Context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type FairMeasurement, measureFairly } from './fair.js';

/** A `chat` span's start attributes, as keel makes them once per model. */
const CHAT_START: Attributes = Object.freeze({
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'simulated',
  'gen_ai.request.model': 'steps',
});
/** `gen_ai.client.operation.duration`'s attributes for a successful call (4). */
const DURATION: Attributes = Object.freeze({
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'simulated',
  'gen_ai.request.model': 'steps',
  'gen_ai.response.model': 'steps',
});
/** `gen_ai.client.token.usage`'s attributes (5). */
const TOKENS: Attributes = Object.freeze({ ...DURATION, 'gen_ai.token.type': 'input' });
/** `keel.tool.duration`'s attributes (2). */
const TOOL: Attributes = Object.freeze({ 'gen_ai.tool.name': 'lookup', 'keel.outcome': 'success' });
const NONE: Attributes = Object.freeze({});

/**
 * Attributes per span in the attribute measurements: more than a span carries, so that the difference with a span
 * without them stands above the noise (the cost of one is the difference over this many).
 */
const ATTRIBUTES_MEASURED = 16;
/** Start attributes of the start-attribute measurement. */
const MANY_START: Attributes = Object.freeze(
  Object.fromEntries(
    Array.from({ length: ATTRIBUTES_MEASURED }, (_, index) => [`keel.part_${index}`, index]),
  ),
);

/** Prints the SDK's cost of each part, in microseconds of CPU time. */
export async function measureParts(options: { rounds: number }): Promise<void> {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: 65_536, scheduledDelayMillis: 200 })],
  });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 1_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const tracer = tracerProvider.getTracer('bench-parts');
  const histogram = meterProvider.getMeter('bench-parts').createHistogram('bench.parts', { unit: 's' });
  const parent: Context = trace.setSpan(ROOT_CONTEXT, tracer.startSpan('invoke_agent bench'));
  let ended = 0;
  const span = (attributes: Attributes | undefined, setAfter: number) => {
    const atMs = Date.now();
    const started = tracer.startSpan(
      'chat steps',
      { kind: SpanKind.CLIENT, startTime: atMs, attributes },
      parent,
    );
    for (let index = 0; index < setAfter; index++) started.setAttribute(`keel.part_${index}`, index);
    started.end(atMs);
    // What the in-memory exporter holds is dropped now and then, as an exporter that sends spans away would.
    if (++ended % 1_000 === 0) spans.reset();
  };
  const loop = (name: string, unit: () => void) => ({
    name,
    run: async (units: number) => {
      for (let index = 0; index < units; index++) unit();
    },
  });
  try {
    const measured = await measureFairly(
      [
        loop('span', () => span(undefined, 0)),
        loop('span+chat', () => span(CHAT_START, 0)),
        loop('span+start', () => span(MANY_START, 0)),
        loop('span+set', () => span(undefined, ATTRIBUTES_MEASURED)),
        loop('record0', () => histogram.record(1, NONE)),
        loop('record2', () => histogram.record(1, TOOL)),
        loop('record4', () => histogram.record(1, DURATION)),
        loop('record5', () => histogram.record(1, TOKENS)),
      ],
      { rounds: options.rounds, blockCpuMs: 10, calibrationUnits: 1_000 },
    );
    const us = (name: string) => (measured.get(name) as FairMeasurement).medianUs;
    const line = (label: string, value: number) =>
      console.log(`  ${label.padEnd(74)} ${value.toFixed(2)} µs`);
    console.log(
      `what each part costs in the SDK, in process (${options.rounds} rounds, median CPU time of one call):`,
    );
    line('a span started and ended, no attributes', us('span'));
    line('a chat span started and ended, its 3 start attributes', us('span+chat'));
    line(
      'a start attribute (checked and copied twice by the SDK, then set)',
      (us('span+start') - us('span')) / ATTRIBUTES_MEASURED,
    );
    line('an attribute set after the start', (us('span+set') - us('span')) / ATTRIBUTES_MEASURED);
    line('a histogram record, no attributes', us('record0'));
    line('a histogram record, 2 attributes (keel.tool.duration)', us('record2'));
    line('a histogram record, 4 attributes (gen_ai.client.operation.duration)', us('record4'));
    line('a histogram record, 5 attributes (gen_ai.client.token.usage)', us('record5'));
  } finally {
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
  }
}
