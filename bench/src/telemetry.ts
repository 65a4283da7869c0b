// What tracing and metrics cost the agent loop, per step, in one run: off (nobody listens), run events on with one
// empty listener (what core spends building events, for reference), on with the OpenTelemetry API's no-op tracer and
// meter (no SDK registered), and on with the real SDK (a batch span processor and a metric reader) exporting to its
// in-memory exporters, tracing also with 1 trace in 10 sampled (a ratio sampler at 0.1). Measured twice. The
// headline: the model behind an OpenAI-wire server on 127.0.0.1, a step as a user's run makes it (one HTTP round trip
// each), the per-step cost a user pays. Then the model and tool in process, keel's own cost per step with nothing
// else to hide it: a stricter figure, where a few microseconds of span and histogram work are a large fraction. Measured as fair.ts says: blocks of runs sized to equal CPU time, subjects in
// rotating order, each subject's cost over telemetry off compared within each round (min / median / max of the
// per-round ratios; the target reads the median). The model server runs in a process of its own (telemetry-server.ts),
// so that its CPU time, and the requests it keeps, are not in the baseline. Then the time spent inside keel's
// listeners (telemetry-listeners.ts), and last what each part (a span, an attribute, a histogram record) costs in the
// SDK alone (telemetry-parts.ts). Run: npm run bench:telemetry

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Agent, agent, type ModelProvider } from '@keel/core';
import { openaiCompatible } from '@keel/openai';
import { keelMetrics, keelTracing } from '@keel/otel';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { type FairMeasurement, measureFairly, printLoadAround, ratioSpread } from './fair.js';
import { lookupTool, stepModel } from './step-agent.js';
import { listenerTime, printListenerTime } from './telemetry-listeners.js';
import { measureParts } from './telemetry-parts.js';

printLoadAround();

const STEPS_PER_RUN = 10;
/** The target: tracing and metrics exported to the SDK's in-memory exporters add at most this much per step. */
const LIMIT_FRACTION = 0.1;

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: 65_536, scheduledDelayMillis: 200 })],
});
/** The same SDK sampling 1 trace in 10 (a ratio sampler at 0.1 for the runs' spans, their children following them). */
const sampledProvider = new BasicTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }),
  spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: 65_536, scheduledDelayMillis: 200 })],
});
let spansExported = 0;
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1_000 });
const meterProvider = new MeterProvider({ readers: [reader] });

/**
 * The same agent eight times: telemetry off, off again (a second agent measured like the others: how far two
 * identical subjects differ, the noise floor of the figures), events to an empty listener, on with the no-op API,
 * tracing alone with the SDK sampling 1 trace in 10, tracing alone and metrics alone with the SDK, both with the
 * SDK.
 */
function subjects(
  model: ModelProvider,
): Record<'off' | 'offAgain' | 'events' | 'noop' | 'sampled' | 'tracing' | 'metrics' | 'sdk', Agent> {
  const make = () => agent({ model, tools: [lookupTool], limits: { maxTurns: STEPS_PER_RUN + 2 } });
  const events = make();
  events.onEvent(() => undefined);
  const noop = make();
  keelTracing().observe(noop);
  keelMetrics().observe(noop);
  const sampled = make();
  keelTracing({ tracer: sampledProvider.getTracer('bench') }).observe(sampled);
  const tracing = make();
  keelTracing({ tracer: tracerProvider.getTracer('bench') }).observe(tracing);
  const metrics = make();
  keelMetrics({ meter: meterProvider.getMeter('bench') }).observe(metrics);
  const sdk = make();
  keelTracing({ tracer: tracerProvider.getTracer('bench') }).observe(sdk);
  keelMetrics({ meter: meterProvider.getMeter('bench') }).observe(sdk);
  return { off: make(), offAgain: make(), events, noop, sampled, tracing, metrics, sdk };
}

/**
 * CPU microseconds per step of each subject, measured fairly (see fair.ts): blocks of runs sized to equal CPU time,
 * subjects in rotating order, each round's figures compared within the round. CPU time, not wall time: on a shared
 * machine a run waits for a core for as long as others keep it, and the wait is not telemetry's cost. The process's
 * CPU counts every thread (the garbage collector's too); the model server runs in a process of its own.
 */
async function perStep(
  agents: Record<string, Agent>,
  options: { rounds: number; blockCpuMs: number; calibrationRuns: number },
): Promise<Map<string, FairMeasurement>> {
  let runs = 0;
  return measureFairly(
    Object.entries(agents).map(([name, subject]) => ({
      name,
      run: async (units: number) => {
        for (let index = 0; index < units; index++) {
          const result = await subject.run('go');
          if (result.status !== 'completed')
            throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
          if (++runs % 20 === 0) dropExportedSpans();
        }
      },
    })),
    { rounds: options.rounds, blockCpuMs: options.blockCpuMs, calibrationUnits: options.calibrationRuns },
  );
}

/** What the in-memory exporter holds is dropped every few runs, as an exporter that sends spans away would. */
function dropExportedSpans(): void {
  spansExported += spans.getFinishedSpans().length;
  spans.reset();
}

function report(title: string, measured: Map<string, FairMeasurement>): boolean {
  const off = measured.get('off')!;
  const perStepUs = (name: string) => measured.get(name)!.medianUs / STEPS_PER_RUN;
  const percent = (ratio: number) => `${ratio < 1 ? '' : '+'}${((ratio - 1) * 100).toFixed(1)}%`;
  const line = (label: string, name: string) => {
    const spread = ratioSpread(measured.get(name)!, off);
    const addedUs = perStepUs(name) - perStepUs('off');
    return `  ${label.padEnd(44)} ${perStepUs(name).toFixed(2)} µs  (${addedUs < 0 ? '' : '+'}${addedUs.toFixed(2)} µs; per round ${percent(spread.median)}, min ${percent(spread.min)}, max ${percent(spread.max)})`;
  };
  console.log(title);
  console.log(`  ${'telemetry off'.padEnd(44)} ${perStepUs('off').toFixed(2)} µs`);
  console.log(line('telemetry off, a second agent (noise floor)', 'offAgain'));
  console.log(line('run events to an empty listener', 'events'));
  console.log(line('tracing + metrics, no-op API', 'noop'));
  console.log(line('tracing alone, SDK, 1 trace in 10 sampled', 'sampled'));
  console.log(line('tracing alone, SDK in memory', 'tracing'));
  console.log(line('metrics alone, SDK in memory', 'metrics'));
  console.log(line('tracing + metrics, SDK in memory', 'sdk'));
  const pass = ratioSpread(measured.get('sdk')!, off).median <= 1 + LIMIT_FRACTION;
  console.log(
    `  SDK in memory adds at most ${LIMIT_FRACTION * 100}% per step (median of per-round ratios): ${pass ? 'PASS' : 'FAIL'}`,
  );
  return pass;
}

const inProcessRounds = Number(process.env.KEEL_BENCH_ROUNDS ?? 40);
const overHttpRounds = Number(process.env.KEEL_BENCH_HTTP_ROUNDS ?? 60);
console.log(
  `telemetry cost per agent step, in CPU time (${STEPS_PER_RUN} steps per run; blocks of runs of equal CPU time, subjects in rotating order; median per step and per-round ratios to telemetry off)`,
);
const server = fork(
  fileURLToPath(new URL('./telemetry-server.js', import.meta.url)),
  [String(STEPS_PER_RUN)],
  {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  },
);
try {
  const url = await new Promise<string>((resolve, reject) => {
    server.once('message', (message: { url: string }) => resolve(message.url));
    server.once('exit', (code) => reject(new Error(`the model server exited (${code})`)));
  });
  const overHttp = report(
    `headline: model over HTTP on 127.0.0.1 (OpenAI wire format, the server in another process), ${overHttpRounds} rounds (what a step costs a user):`,
    await perStep(subjects(openaiCompatible({ baseUrl: url, model: 'steps', provider: 'simulated' })), {
      rounds: overHttpRounds,
      blockCpuMs: 100,
      calibrationRuns: 20,
    }),
  );
  const inProcess = report(
    `strict: model and tool in process, ${inProcessRounds} rounds (keel's own cost per step, nothing else):`,
    await perStep(subjects(stepModel(STEPS_PER_RUN)), {
      rounds: inProcessRounds,
      blockCpuMs: 20,
      calibrationRuns: 200,
    }),
  );
  console.log(
    "where the time goes: time inside keel's two listeners (keel's code and the SDK calls it makes), SDK in memory; the rest of each difference above is spent outside them (garbage collection of what the SDK keeps, core building run events):",
  );
  let listenerRuns = 0;
  const listenerOptions = {
    tracing: keelTracing({ tracer: tracerProvider.getTracer('bench') }),
    metrics: keelMetrics({ meter: meterProvider.getMeter('bench') }),
    steps: STEPS_PER_RUN,
    afterRun: () => {
      if (++listenerRuns % 20 === 0) dropExportedSpans();
    },
  };
  printListenerTime(
    'model over HTTP, 1,000 runs:',
    await listenerTime({
      ...listenerOptions,
      model: openaiCompatible({ baseUrl: url, model: 'steps', provider: 'simulated' }),
      runs: 1_000,
    }),
  );
  printListenerTime(
    'model and tool in process, 20,000 runs:',
    await listenerTime({ ...listenerOptions, model: stepModel(STEPS_PER_RUN), runs: 20_000 }),
  );
  await measureParts({ rounds: Number(process.env.KEEL_BENCH_PARTS_ROUNDS ?? 20) });
  await tracerProvider.forceFlush();
  console.log(`spans the SDK exported to memory: ${spansExported + spans.getFinishedSpans().length}`);
  console.log(
    `target (at most ${LIMIT_FRACTION * 100}% more with the SDK in memory): over HTTP ${overHttp ? 'met' : 'NOT met'}; in process ${inProcess ? 'met' : 'NOT met'}`,
  );
} finally {
  server.send('close');
  await Promise.all([tracerProvider.shutdown(), sampledProvider.shutdown(), meterProvider.shutdown()]);
}
