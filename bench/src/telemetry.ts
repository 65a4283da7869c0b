// What tracing and metrics cost the agent loop, per step, in one run: off (nobody listens), run events on with one
// empty listener (what core spends building events, for reference), on with the OpenTelemetry API's no-op tracer and
// meter (no SDK registered), and on with the real SDK (a batch span processor and a metric reader) exporting to its
// in-memory exporters. Measured twice. The headline: the model behind an OpenAI-wire server on 127.0.0.1, a step as a
// user's run makes it (one HTTP round trip each), the per-step cost a user pays. Then the model and tool in process,
// keel's own cost per step with nothing else to hide it: a stricter figure, where a few microseconds of span and
// histogram work are a large fraction. Runs of the subjects alternate in rotating order; each figure is the median CPU
// time per step over runs. Run: npm run bench:telemetry

import { type Agent, agent, type ModelProvider } from '@keel/core';
import { keelMetrics, keelTracing } from '@keel/otel';
import { type Brain, simulated } from '@keel/simulated';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { printLoadAround } from './fair.js';
import { percentile } from './statistics.js';
import { lookupTool, stepModel } from './step-agent.js';

printLoadAround();

const STEPS_PER_RUN = 10;
/** The target: tracing and metrics exported to the SDK's in-memory exporters add at most this much per step. */
const LIMIT_FRACTION = 0.1;

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: 65_536, scheduledDelayMillis: 200 })],
});
let spansExported = 0;
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1_000 });
const meterProvider = new MeterProvider({ readers: [reader] });

/**
 * The same agent six times: telemetry off, events to an empty listener, on with the no-op API, tracing alone and
 * metrics alone with the SDK, both with the SDK.
 */
function subjects(
  model: ModelProvider,
): Record<'off' | 'events' | 'noop' | 'tracing' | 'metrics' | 'sdk', Agent> {
  const make = () => agent({ model, tools: [lookupTool], limits: { maxTurns: STEPS_PER_RUN + 2 } });
  const events = make();
  events.onEvent(() => undefined);
  const noop = make();
  keelTracing().observe(noop);
  keelMetrics().observe(noop);
  const tracing = make();
  keelTracing({ tracer: tracerProvider.getTracer('bench') }).observe(tracing);
  const metrics = make();
  keelMetrics({ meter: meterProvider.getMeter('bench') }).observe(metrics);
  const sdk = make();
  keelTracing({ tracer: tracerProvider.getTracer('bench') }).observe(sdk);
  keelMetrics({ meter: meterProvider.getMeter('bench') }).observe(sdk);
  return { off: make(), events, noop, tracing, metrics, sdk };
}

/**
 * Median CPU microseconds per step of each subject, over `runs` runs each (the first tenth warms up, uncounted). CPU
 * time, not wall time: on a shared machine a run waits for a core for as long as others keep it, and the wait is not
 * telemetry's cost. The process's CPU counts every thread (the garbage collector's too) and, over HTTP, the server.
 */
async function perStep(agents: Record<string, Agent>, runs: number): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(agents).map((name) => [name, []]));
  const entries = Object.entries(agents);
  for (let index = 0; index < runs; index++) {
    // The order rotates, so that no subject always runs after the one whose garbage it collects.
    for (let turn = 0; turn < entries.length; turn++) {
      const [name, subject] = entries[(index + turn) % entries.length]!;
      const start = process.cpuUsage();
      const result = await subject.run('go');
      const used = process.cpuUsage(start);
      const elapsedUs = used.user + used.system;
      if (result.status !== 'completed')
        throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
      if (index >= runs / 10) samples[name]!.push(elapsedUs / STEPS_PER_RUN);
    }
    // What the in-memory exporter holds is dropped every few runs, as an exporter that sends spans away would.
    if (index % 10 === 0) {
      spansExported += spans.getFinishedSpans().length;
      spans.reset();
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, values]) => [
      name,
      percentile(
        values.sort((a, b) => a - b),
        0.5,
      ),
    ]),
  );
}

function report(title: string, figures: Record<string, number>): boolean {
  const off = figures.off!;
  const signed = (value: number, digits: number, unit: string) =>
    `${value < 0 ? '' : '+'}${value.toFixed(digits)}${unit}`;
  const line = (label: string, us: number) =>
    `  ${label.padEnd(40)} ${us.toFixed(2)} µs  (${signed(us - off, 2, ' µs')}, ${signed((us / off - 1) * 100, 1, '%')})`;
  console.log(title);
  console.log(`  ${'telemetry off'.padEnd(40)} ${off.toFixed(2)} µs`);
  console.log(line('run events to an empty listener', figures.events!));
  console.log(line('tracing + metrics, no-op API', figures.noop!));
  console.log(line('tracing alone, SDK in memory', figures.tracing!));
  console.log(line('metrics alone, SDK in memory', figures.metrics!));
  console.log(line('tracing + metrics, SDK in memory', figures.sdk!));
  const pass = figures.sdk! <= off * (1 + LIMIT_FRACTION);
  console.log(`  SDK in memory adds at most ${LIMIT_FRACTION * 100}% per step: ${pass ? 'PASS' : 'FAIL'}`);
  return pass;
}

/** Answers like `stepModel`, over HTTP: a `lookup` call per step until the last, then the answer. */
const stepBrain: Brain = (request) => {
  const toolResults = request.messages.filter((message) => message.role === 'tool').length;
  return toolResults >= STEPS_PER_RUN - 1
    ? { content: 'done' }
    : { toolCalls: [{ name: 'lookup', arguments: { key: `k${toolResults}` } }] };
};

const inProcessRuns = Number(process.env.KEEL_BENCH_RUNS ?? 4_000);
const overHttpRuns = Number(process.env.KEEL_BENCH_HTTP_RUNS ?? 600);
console.log(
  `telemetry cost per agent step, in CPU time (${STEPS_PER_RUN} steps per run; medians; subjects alternate run by run)`,
);
const server = simulated({ model: 'steps', brain: stepBrain });
try {
  const overHttp = report(
    `headline: model over HTTP on 127.0.0.1 (OpenAI wire format), ${overHttpRuns} runs each (what a step costs a user):`,
    await perStep(subjects(server), overHttpRuns),
  );
  const inProcess = report(
    `strict: model and tool in process, ${inProcessRuns} runs each (keel's own cost per step, nothing else):`,
    await perStep(subjects(stepModel(STEPS_PER_RUN)), inProcessRuns),
  );
  await tracerProvider.forceFlush();
  console.log(`spans the SDK exported to memory: ${spansExported + spans.getFinishedSpans().length}`);
  console.log(
    `target (at most ${LIMIT_FRACTION * 100}% more with the SDK in memory): over HTTP ${overHttp ? 'met' : 'NOT met'}; in process ${inProcess ? 'met' : 'NOT met'}`,
  );
} finally {
  await server.close();
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
}
