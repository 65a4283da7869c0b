// Runs per second through a fleet: the same runs (an agent file on the simulated provider, a weather lookup and a
// ticket, two steps) submitted to one `keel worker` process, then to N of them, against a private PostgreSQL and
// Redis; and, for reference, run in this process with no queue at all. Then runs that wait on a slow dependency (an
// HTTP tool whose server answers after SLOW_TOOL_MS), as agents mostly do, through one worker and through N.
// Run: npm run bench:fleet  (KEEL_BENCH_FLEET_RUNS, KEEL_BENCH_FLEET_WORKERS, KEEL_BENCH_FLEET_CONCURRENCY)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agent, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { PostgresRunStore } from '@keel/store-postgres';
import { runQueue } from '@keel/worker';
import { printLoadAround } from './fair.js';
import { startBenchRedis } from './redis-server.js';

printLoadAround();

const RUNS = Number(process.env.KEEL_BENCH_FLEET_RUNS ?? 300);
const WORKERS = Number(process.env.KEEL_BENCH_FLEET_WORKERS ?? 3);
const CONCURRENCY = Number(process.env.KEEL_BENCH_FLEET_CONCURRENCY ?? 8);
const TASK = 'Create a ticket about the weather in Oslo';
const SLOW_TASK = 'What is the weather in Oslo?';
/** How long the slow tool's server takes to answer, in milliseconds. */
const SLOW_TOOL_MS = Number(process.env.KEEL_BENCH_FLEET_SLOW_TOOL_MS ?? 100);

/** The agent files of the two cases, for an agent named `name`. */
const AGENT_FILES = {
  quick: (name: string) => `name: ${name}\ntools: [create_ticket, get_weather]\n`,
  slow: (name: string, url: string) =>
    [
      `name: ${name}`,
      'tools:',
      '  - http:',
      '      name: get_weather',
      '      description: Current weather for a city',
      '      input: { type: object, properties: { city: { type: string } }, required: [city] }',
      `      url: "${url}/weather/{city}"`,
      '      allow: [127.0.0.1]',
      '      idempotent: true',
      '',
    ].join('\n'),
};

/** A weather API on 127.0.0.1 that answers after SLOW_TOOL_MS. */
async function startSlowServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    setTimeout(() => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ path: request.url, conditions: 'sunny', celsius: 4 }));
    }, SLOW_TOOL_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the slow server has no port');
  return { url: `http://127.0.0.1:${address.port}`, server };
}
const KEEL = fileURLToPath(new URL('../../packages/cli/bin/keel.js', import.meta.url));

/** Starts `count` keel workers and resolves once each printed its ready line; `finished` counts runs ended. */
async function startWorkers(count: number, directory: string, store: string, redis: string) {
  const counter = { finished: 0, problems: [] as string[] };
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
            if (line.includes('"run-finished"')) {
              counter.finished++;
              const { status, errorCode } = JSON.parse(line) as { status: string; errorCode?: string };
              if (status !== 'completed') counter.problems.push(`${status} ${errorCode ?? ''}`.trim());
            }
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

/** Runs per second of RUNS runs of `task` submitted to `count` workers of the agent file `agentFile` makes. */
async function throughFleet(
  count: number,
  storeUrl: string,
  redisUrl: string,
  agentFile: (name: string) => string,
  task: string,
): Promise<number> {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-fleet-'));
  const agentName = `bench-fleet-${count}-${Date.now().toString(36)}`;
  writeFileSync(join(directory, 'fleet.yaml'), agentFile(agentName));
  const workers = await startWorkers(count, directory, storeUrl, redisUrl);
  const store = new PostgresRunStore({ connectionString: storeUrl });
  const queue = runQueue({ store, redis: redisUrl });
  try {
    const start = performance.now();
    for (let first = 0; first < RUNS; first += 50) {
      const batch = Array.from({ length: Math.min(50, RUNS - first) }, () => queue.submit(agentName, task));
      await Promise.all(batch);
    }
    while (workers.counter.finished < RUNS) await new Promise((resolve) => setTimeout(resolve, 10));
    const elapsedMs = performance.now() - start;
    const { problems } = workers.counter;
    if (problems.length > 0)
      throw new Error(`${problems.length} runs did not complete: ${problems.slice(0, 3)}`);
    return (RUNS * 1_000) / elapsedMs;
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

/** Prints the runs per second of one worker, then of WORKERS workers. */
async function compareWorkers(
  storeUrl: string,
  redisUrl: string,
  agentFile: (name: string) => string,
  task: string,
): Promise<void> {
  const one = await throughFleet(1, storeUrl, redisUrl, agentFile, task);
  console.log(`  1 keel worker process             ${one.toFixed(1).padStart(7)} runs/s`);
  const many = await throughFleet(WORKERS, storeUrl, redisUrl, agentFile, task);
  console.log(
    `  ${WORKERS} keel worker processes           ${many.toFixed(1).padStart(7)} runs/s  (${(many / one).toFixed(2)}x one worker)`,
  );
}

async function main(): Promise<void> {
  const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));
  const port = process.env.KEEL_POSTGRES_PORT ?? '54349';
  const storeUrl = execFileSync('bash', [script, 'start', port], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  const redis = await startBenchRedis();
  const slow = await startSlowServer();
  try {
    console.log(
      `fleet: ${RUNS} two-step runs (simulated model, a ticket and a weather lookup) on PostgreSQL and Redis, ` +
        `concurrency ${CONCURRENCY} per process`,
    );
    const local = await inProcess(storeUrl);
    console.log(`  in this process, no queue         ${local.toFixed(1).padStart(7)} runs/s`);
    await compareWorkers(storeUrl, redis.url, AGENT_FILES.quick, TASK);
    console.log(
      `fleet: ${RUNS} runs waiting ${SLOW_TOOL_MS} ms on an HTTP tool (a weather API on 127.0.0.1), ` +
        `concurrency ${CONCURRENCY} per process`,
    );
    await compareWorkers(storeUrl, redis.url, (name) => AGENT_FILES.slow(name, slow.url), SLOW_TASK);
  } finally {
    slow.server.close();
    await redis.stop();
    execFileSync('bash', [script, 'stop', port]);
  }
}

await main();
