// Measures the cost of a checkpoint per step for the SQLite and PostgreSQL run stores: p50 and p99 latency of one
// saveCheckpoint (with the tool ledger writes a step makes), and the steps per second one run sustains.
// Run: npm run bench:checkpoints  (starts a private PostgreSQL on 127.0.0.1 through scripts/postgres.sh)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonValue, RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';
import { formatMs, percentile } from './statistics.js';

const STEPS = Number(process.env.KEEL_BENCH_STEPS ?? 2_000);
const WARMUP_STEPS = 200;

/** A run state of realistic size: a conversation of a few turns with tool results (about 6 KB as JSON). */
function stateAt(step: number): JsonValue {
  const messages: JsonValue[] = [
    { role: 'user', content: 'Plan a two-day trip to Paris and check the weather.' },
  ];
  for (let turn = 0; turn < 6; turn++) {
    messages.push({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `call_${turn}`, name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    messages.push({
      role: 'tool',
      toolCallId: `call_${turn}`,
      toolName: 'get_weather',
      content: 'x'.repeat(700),
    });
  }
  return { schemaVersion: 1, step, messages, usage: { inputTokens: step * 100, outputTokens: step * 20 } };
}

async function measure(label: string, store: RunStore): Promise<void> {
  const runId = `bench-${label}-${Date.now()}`;
  await store.createRun({
    runId,
    agentName: 'bench',
    status: 'running',
    schemaVersion: 1,
    state: stateAt(0),
    createdAtMs: Date.now(),
  });
  await store.acquireLease(runId, 'bench', 3_600_000, Date.now());
  let version = 1;
  const checkpointSamples: number[] = [];
  const started = performance.now();
  for (let step = 1; step <= STEPS + WARMUP_STEPS; step++) {
    const idempotencyKey = `${runId}:${step}:0`;
    // A step with one tool call writes: tool call started, tool call completed, step checkpoint.
    await store.recordToolStarted({
      runId,
      idempotencyKey,
      step,
      callIndex: 0,
      toolName: 'get_weather',
      startedAtMs: Date.now(),
    });
    await store.recordToolCompleted(
      runId,
      idempotencyKey,
      { status: 'success', content: 'sunny' },
      Date.now(),
    );
    const checkpointStart = performance.now();
    version = await store.saveCheckpoint(runId, {
      expectedVersion: version,
      owner: 'bench',
      status: 'running',
      schemaVersion: 1,
      state: stateAt(step),
    });
    const end = performance.now();
    if (step > WARMUP_STEPS) checkpointSamples.push(end - checkpointStart);
  }
  const totalMs = performance.now() - started;
  checkpointSamples.sort((left, right) => left - right);
  const stepsPerSecond = ((STEPS + WARMUP_STEPS) / totalMs) * 1_000;
  console.log(
    `${label.padEnd(22)} checkpoint p50 ${formatMs(percentile(checkpointSamples, 0.5))}  p99 ${formatMs(
      percentile(checkpointSamples, 0.99),
    )}  steps/s (3 writes a step) ${stepsPerSecond.toFixed(0)}`,
  );
}

async function main(): Promise<void> {
  console.log(`checkpoint cost per step, ${STEPS} steps after ${WARMUP_STEPS} warm-up, state ~6 KB`);
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-'));
  const sqlite = new SqliteRunStore(join(directory, 'bench.db'));
  await measure('sqlite (WAL, normal)', sqlite);
  await sqlite.close();
  const sqliteFull = new SqliteRunStore(join(directory, 'bench-full.db'), { synchronous: 'full' });
  await measure('sqlite (WAL, full)', sqliteFull);
  await sqliteFull.close();
  rmSync(directory, { recursive: true, force: true });

  const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));
  const port = process.env.KEEL_POSTGRES_PORT ?? '54329';
  const url = execFileSync('bash', [script, 'start', port], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  const postgres = new PostgresRunStore({ connectionString: url });
  await measure('postgres (loopback)', postgres);
  await postgres.close();
}

await main();
