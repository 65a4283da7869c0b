// A fleet of three `keel worker` processes (the built binary) sharing one daily token budget through Redis, their
// model a real OpenAI-wire server on 127.0.0.1 that counts the tokens of every answer it gives: the fleet never spends
// more than the budget, however the runs interleave across processes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SimulatedServer, startSimulatedServer } from '@keel/simulated';
import { SqliteRunStore } from '@keel/store-sqlite';
import { runQueue } from '@keel/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FleetProcess, type WorkerLine, waitForLines } from '../../test-support/fleet-process.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');
const directory = mkdtempSync(join(tmpdir(), 'keel-fleet-budget-'));
const unique = `${process.pid}-${Date.now().toString(36)}`;
const agentName = `budgeted-${unique}`;
const store = join(directory, 'fleet.db');
const BUDGET_TOKENS = 600;
const RUNS = 30;
let server: SimulatedServer;

beforeAll(async () => {
  server = await startSimulatedServer();
  writeFileSync(
    join(directory, 'budgeted.yaml'),
    [
      `name: ${agentName}`,
      `model: { provider: openai, name: gpt-budget, baseUrl: "${server.url}" }`,
      'budgets:',
      '  defaultOutputTokens: 200',
      '  minOutputTokens: 200',
      '  limits:',
      // A budget of its own name: the test Redis is shared with other tests.
      `    - { name: daily-${unique}, scope: global, maxTokens: ${BUDGET_TOKENS}, period: day }`,
      '',
    ].join('\n'),
  );
}, 60_000);
afterAll(async () => {
  await server?.close();
  rmSync(directory, { recursive: true, force: true });
});

it('three worker processes with a shared daily budget never spend more than it, as the server counts', async () => {
  // Submitted in process (keel submit is tested elsewhere; forty processes would take minutes on a loaded machine).
  const runStore = new SqliteRunStore(store);
  const queue = runQueue({ store: runStore, redis: redisUrl });
  try {
    for (let index = 0; index < RUNS; index++) {
      await queue.submit(agentName, `Say hello to visitor ${index}`, { tenant: `tenant-${index % 3}` });
    }
  } finally {
    await queue.close();
    await runStore.close();
  }
  const finished = new Map<string, WorkerLine>();
  const workers = [0, 1, 2].map(
    (index) =>
      new FleetProcess(
        index,
        () => ['worker', 'budgeted.yaml', '--store', store, '--redis', redisUrl, '--json'],
        directory,
        (line) => {
          if (line.type === 'run-finished' && line.runId !== undefined) finished.set(line.runId, line);
        },
      ),
  );
  for (const worker of workers) worker.start();
  try {
    for (const worker of workers) await waitForLines(worker, () => finished.size === RUNS);
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
  const answered = server.requests.filter((record) => record.status === 200);
  const spent = answered.reduce(
    (sum, record) => sum + (record.promptTokens ?? 0) + (record.completionTokens ?? 0),
    0,
  );
  expect(spent).toBeLessThanOrEqual(BUDGET_TOKENS);
  // Near the end: what is left is under one call's worst case (prompt and 200 output tokens).
  expect(spent).toBeGreaterThan(BUDGET_TOKENS - 400);
  const outcomes = [...finished.values()].map((line) => line.stopReason);
  // The budget runs out part way: some runs completed, the rest were refused before sending anything.
  expect(outcomes.filter((reason) => reason === 'final_answer').length).toBe(answered.length);
  expect(outcomes.filter((reason) => reason === 'budget_exhausted').length).toBe(RUNS - answered.length);
  expect(answered.length).toBeGreaterThan(5);
  expect(answered.length).toBeLessThan(RUNS);
  // Every worker took part.
  expect(new Set([...finished.values()].map((line) => line.worker)).size).toBeGreaterThan(1);
}, 300_000);
