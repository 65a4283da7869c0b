// The cost of durability per step, measured through the run loop: agents run 10-step runs (an in-process model and
// tool) on SQLite and PostgreSQL stores; every checkpoint the loop writes is timed (p50, p99), and the steps per
// second one run sustains are compared with the same runs without a store.
// Run: npm run bench:checkpoints  (starts a private PostgreSQL on 127.0.0.1 through scripts/postgres.sh, then stops it)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agent, type RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';
import { formatMs, percentile } from './statistics.js';
import { lookupTool, stepModel } from './step-agent.js';

const STEPS_PER_RUN = 10;
const RUNS = Number(process.env.KEEL_BENCH_RUNS ?? 300);
const WARMUP_RUNS = 200;

interface Measurement {
  label: string;
  checkpointSamplesMs: number[];
  checkpointsPerStep: number;
  stepsPerSecond: number;
}

/** The store, with every saveCheckpoint timed into `samples`. */
function timed(store: RunStore, samples: number[]): RunStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== 'saveCheckpoint') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: Parameters<RunStore['saveCheckpoint']>) => {
        const start = performance.now();
        try {
          return await target.saveCheckpoint(...args);
        } finally {
          samples.push(performance.now() - start);
        }
      };
    },
  });
}

async function stepsPerSecond(store: RunStore | undefined, samples: number[], runs: number): Promise<number> {
  const assistant = agent({
    model: stepModel(STEPS_PER_RUN),
    tools: [lookupTool],
    limits: { maxTurns: STEPS_PER_RUN + 2 },
    ...(store === undefined ? {} : { store: timed(store, samples) }),
  });
  const start = performance.now();
  for (let index = 0; index < runs; index++) {
    const result = await assistant.run('go');
    if (result.status !== 'completed')
      throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
  }
  return (runs * STEPS_PER_RUN * 1_000) / (performance.now() - start);
}

async function measure(label: string, store: RunStore | undefined): Promise<Measurement> {
  const warmup: number[] = [];
  await stepsPerSecond(store, warmup, WARMUP_RUNS);
  const samples: number[] = [];
  const rate = await stepsPerSecond(store, samples, RUNS);
  await store?.close();
  samples.sort((left, right) => left - right);
  return {
    label,
    checkpointSamplesMs: samples,
    checkpointsPerStep: samples.length / (RUNS * STEPS_PER_RUN),
    stepsPerSecond: rate,
  };
}

function print(measurement: Measurement, targetMs?: number): void {
  const p50 = percentile(measurement.checkpointSamplesMs, 0.5);
  const checkpoint =
    measurement.checkpointSamplesMs.length === 0
      ? 'no checkpoints'.padEnd(58)
      : `checkpoint p50 ${formatMs(p50)}  p99 ${formatMs(percentile(measurement.checkpointSamplesMs, 0.99))}  ` +
        `(${measurement.checkpointsPerStep.toFixed(1)} a step)`;
  const verdict =
    targetMs === undefined ? '' : `  target p50 <= ${targetMs} ms: ${p50 <= targetMs ? 'PASS' : 'FAIL'}`;
  console.log(
    `${measurement.label.padEnd(26)} ${checkpoint}  ${measurement.stepsPerSecond.toFixed(0).padStart(6)} steps/s${verdict}`,
  );
}

async function main(): Promise<void> {
  console.log(
    `durable runs: ${RUNS} runs of ${STEPS_PER_RUN} steps per store (after ${WARMUP_RUNS} warm-up runs)`,
  );
  print(await measure('no store', undefined));
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-'));
  try {
    print(await measure('sqlite (WAL, normal)', new SqliteRunStore(join(directory, 'normal.db'))), 0.3);
    print(
      await measure(
        'sqlite (WAL, full fsync)',
        new SqliteRunStore(join(directory, 'full.db'), { synchronous: 'full' }),
      ),
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));
  const port = process.env.KEEL_POSTGRES_PORT ?? '54339';
  const url = execFileSync('bash', [script, 'start', port], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  try {
    print(await measure('postgres (loopback)', new PostgresRunStore({ connectionString: url })), 2);
  } finally {
    execFileSync('bash', [script, 'stop', port]);
  }
}

await main();
