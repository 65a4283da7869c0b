// Runs per second through a fleet: the same runs (an agent file on the simulated provider, a weather lookup and a
// ticket, two steps) submitted to one `keel worker` process, then to N of them, against a private PostgreSQL and
// Redis; and, for reference, run in this process with no queue at all.
// Run: npm run bench:fleet  (KEEL_BENCH_FLEET_RUNS, KEEL_BENCH_FLEET_WORKERS, KEEL_BENCH_FLEET_CONCURRENCY)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agent, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { PostgresRunStore } from '@keel/store-postgres';
import { runQueue } from '@keel/worker';
import { Redis } from 'ioredis';

const RUNS = Number(process.env.KEEL_BENCH_FLEET_RUNS ?? 300);
const WORKERS = Number(process.env.KEEL_BENCH_FLEET_WORKERS ?? 3);
const CONCURRENCY = Number(process.env.KEEL_BENCH_FLEET_CONCURRENCY ?? 8);
const TASK = 'Create a ticket about the weather in Oslo';
const KEEL = fileURLToPath(new URL('../../packages/cli/bin/keel.js', import.meta.url));

/** A private redis-server on `port`, ready when this resolves. */
async function startRedis(port: number): Promise<{ url: string; stop(): void }> {
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      break;
    } catch (error) {
      client.disconnect();
      if (attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { url, stop: () => server.kill('SIGTERM') };
}

/** Starts `count` keel workers and resolves once each printed its ready line; `finished` counts runs ended. */
async function startWorkers(count: number, directory: string, store: string, redis: string) {
  const counter = { finished: 0 };
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const args = [
      'worker',
      'fleet.yaml',
      '--store',
      store,
      '--redis',
      redis,
      '--concurrency',
      String(CONCURRENCY),
      '--json',
    ];
    const child = spawn(process.execPath, [KEEL, ...args], {
      cwd: directory,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    ready.push(
      new Promise((resolve) => {
        let buffered = '';
        child.stdout?.setEncoding('utf8');
        child.stdout?.on('data', (chunk: string) => {
          buffered += chunk;
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          for (const line of lines) {
            if (line.includes('"worker-ready"')) resolve();
            if (line.includes('"run-finished"')) counter.finished++;
          }
        });
      }),
    );
  }
  await Promise.all(ready);
  return {
    counter,
    async stop(): Promise<void> {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/** Runs per second of RUNS runs submitted to `count` workers. */
async function throughFleet(count: number, storeUrl: string, redisUrl: string): Promise<number> {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-fleet-'));
  const agentName = `bench-fleet-${count}-${Date.now().toString(36)}`;
  writeFileSync(join(directory, 'fleet.yaml'), `name: ${agentName}\ntools: [create_ticket, get_weather]\n`);
  const workers = await startWorkers(count, directory, storeUrl, redisUrl);
  const store = new PostgresRunStore({ connectionString: storeUrl });
  const queue = runQueue({ store, redis: redisUrl });
  try {
    const start = performance.now();
    for (let first = 0; first < RUNS; first += 50) {
      const batch = Array.from({ length: Math.min(50, RUNS - first) }, () => queue.submit(agentName, TASK));
      await Promise.all(batch);
    }
    while (workers.counter.finished < RUNS) await new Promise((resolve) => setTimeout(resolve, 10));
    return (RUNS * 1_000) / (performance.now() - start);
  } finally {
    await workers.stop();
    await queue.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Runs per second of the same runs in this process, CONCURRENCY at once, with no queue. */
async function inProcess(storeUrl: string): Promise<number> {
  const provider = simulated({ model: 'sim-primary' });
  const store = new PostgresRunStore({ connectionString: storeUrl });
  const ticket = tool({
    name: 'create_ticket',
    description: 'Opens a support ticket',
    input: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    execute: (input) => ({ ticket: 'T-1', title: (input as { title: string }).title }),
  });
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    idempotent: true,
    execute: (input) => ({ city: (input as { city: string }).city, conditions: 'sunny' }),
  });
  const assistant = agent({ model: provider, tools: [ticket, weather], store });
  try {
    let next = 0;
    const start = performance.now();
    const lane = async () => {
      while (next++ < RUNS) {
        const result = await assistant.run(TASK);
        if (result.status !== 'completed') throw new Error(`bench run ended ${result.status}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    return (RUNS * 1_000) / (performance.now() - start);
  } finally {
    await provider.close();
    await store.close();
  }
}

async function main(): Promise<void> {
  const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));
  const port = process.env.KEEL_POSTGRES_PORT ?? '54349';
  const storeUrl = execFileSync('bash', [script, 'start', port], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  const redis = await startRedis(Number(process.env.KEEL_REDIS_PORT ?? 56389));
  try {
    console.log(
      `fleet: ${RUNS} two-step runs (simulated model, a ticket and a weather lookup) on PostgreSQL and Redis, ` +
        `concurrency ${CONCURRENCY} per process`,
    );
    const local = await inProcess(storeUrl);
    console.log(`  in this process, no queue         ${local.toFixed(1).padStart(7)} runs/s`);
    const one = await throughFleet(1, storeUrl, redis.url);
    console.log(`  1 keel worker process             ${one.toFixed(1).padStart(7)} runs/s`);
    const many = await throughFleet(WORKERS, storeUrl, redis.url);
    console.log(
      `  ${WORKERS} keel worker processes           ${many.toFixed(1).padStart(7)} runs/s  (${(many / one).toFixed(2)}x one worker)`,
    );
  } finally {
    redis.stop();
    execFileSync('bash', [script, 'stop', port]);
  }
}

await main();
