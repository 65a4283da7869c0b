// What tracing and metrics cost the agent loop, per step, in one run: off (nobody listens), run events on with one
// empty listener (what core spends building events, for reference), on with the OpenTelemetry API's no-op tracer and
// meter (no SDK registered), and on with the real SDK (a batch span processor and a metric reader) exporting to its
// in-memory exporters. Measured twice. The headline: the model behind an OpenAI-wire server on 127.0.0.1, a step as a
// user's run makes it (one HTTP round trip each), the per-step cost a user pays. Then the model and tool in process,
// keel's own cost per step with nothing else to hide it: a stricter figure, where a few microseconds of span and
// histogram work are a large fraction. Measured as fair.ts says: each subject in a process of its own
// (telemetry-subjects.ts: one heap per subject, so that the SDK's garbage is collected in its own blocks), blocks of
// runs sized to equal CPU time, subjects in rotating order, each subject's cost over telemetry off compared within
// each round (min / median / max of the per-round ratios; the target reads the median). The model server runs in a
// process of its own (telemetry-server.ts), so that its CPU time, and the requests it keeps, are not in the baseline.
// Last, what each part (a span, an attribute, a histogram record) costs in the SDK alone (telemetry-parts.ts).
// Run: npm run bench:telemetry  (KEEL_BENCH_HTTP_ROUNDS 25, KEEL_BENCH_ROUNDS 40, KEEL_BENCH_PARTS_ROUNDS 20)

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type FairMeasurement, measureIsolated, printLoadAround, ratioSpread } from './fair.js';
import { measureParts } from './telemetry-parts.js';
import { TELEMETRY_STEPS } from './telemetry-subjects.js';

printLoadAround();

/** The target: tracing and metrics exported to the SDK's in-memory exporters add at most this much per step. */
const LIMIT_FRACTION = 0.1;

/** Each subject's factory in telemetry-subjects.ts; `offAgain` is a second process of telemetry off. */
const SUBJECTS: Record<string, string> = {
  off: 'telemetryOff',
  offAgain: 'telemetryOff',
  events: 'telemetryEvents',
  noop: 'telemetryNoop',
  tracing: 'telemetryTracing',
  metrics: 'telemetryMetrics',
  sdk: 'telemetrySdk',
};

/**
 * CPU microseconds per run of each subject, each in a process of its own (see fair.ts), the model at `modelUrl` (over
 * HTTP) or in process. CPU time, not wall time: on a shared machine a run waits for a core for as long as others keep
 * it, and the wait is not telemetry's cost. A process's CPU counts every thread (the garbage collector's too).
 */
function perRun(
  modelUrl: string | undefined,
  options: { rounds: number; blockCpuMs: number; calibrationRuns: number },
): Promise<Map<string, FairMeasurement>> {
  process.env.KEEL_BENCH_MODEL_URL = modelUrl ?? '';
  const moduleUrl = new URL('./telemetry-subjects.js', import.meta.url).href;
  return measureIsolated(
    Object.entries(SUBJECTS).map(([name, factory]) => ({ name, moduleUrl, factory })),
    {
      rounds: options.rounds,
      blockCpuMs: options.blockCpuMs,
      calibrationUnits: options.calibrationRuns,
      warmupRounds: 5,
    },
  );
}

function report(title: string, measured: Map<string, FairMeasurement>): boolean {
  const off = measured.get('off')!;
  const perStepUs = (name: string) => measured.get(name)!.medianUs / TELEMETRY_STEPS;
  const percent = (ratio: number) => `${ratio < 1 ? '' : '+'}${((ratio - 1) * 100).toFixed(1)}%`;
  const line = (label: string, name: string) => {
    const spread = ratioSpread(measured.get(name)!, off);
    const addedUs = perStepUs(name) - perStepUs('off');
    return `  ${label.padEnd(44)} ${perStepUs(name).toFixed(2)} µs  (${addedUs < 0 ? '' : '+'}${addedUs.toFixed(2)} µs; per round ${percent(spread.median)}, min ${percent(spread.min)}, max ${percent(spread.max)})`;
  };
  console.log(title);
  console.log(`  ${'telemetry off'.padEnd(44)} ${perStepUs('off').toFixed(2)} µs`);
  console.log(line('telemetry off, a second process (noise floor)', 'offAgain'));
  console.log(line('run events to an empty listener', 'events'));
  console.log(line('tracing + metrics, no-op API', 'noop'));
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
const overHttpRounds = Number(process.env.KEEL_BENCH_HTTP_ROUNDS ?? 25);
console.log(
  `telemetry cost per agent step, in CPU time (${TELEMETRY_STEPS} steps per run; each subject in a process of its own; blocks of runs of equal CPU time, subjects in rotating order; median per step and per-round ratios to telemetry off)`,
);
const server = fork(
  fileURLToPath(new URL('./telemetry-server.js', import.meta.url)),
  [String(TELEMETRY_STEPS)],
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
    await perRun(url, { rounds: overHttpRounds, blockCpuMs: 200, calibrationRuns: 20 }),
  );
  const inProcess = report(
    `strict: model and tool in process, ${inProcessRounds} rounds (keel's own cost per step, nothing else):`,
    await perRun(undefined, { rounds: inProcessRounds, blockCpuMs: 50, calibrationRuns: 200 }),
  );
  await measureParts({ rounds: Number(process.env.KEEL_BENCH_PARTS_ROUNDS ?? 20) });
  console.log(
    `target (at most ${LIMIT_FRACTION * 100}% more with the SDK in memory): over HTTP ${overHttp ? 'met' : 'NOT met'}; in process ${inProcess ? 'met' : 'NOT met'}`,
  );
} finally {
  server.send('close');
}
