// A fleet: runs submitted to a queue (Redis, through BullMQ) with their state in PostgreSQL, taken by workers on any
// machine that share the same store and Redis; a worker that dies has its runs resumed from their last checkpoint.
// Needs PostgreSQL and Redis: KEEL_POSTGRES_URL and KEEL_REDIS_URL (the tests start private ones).
//   npm run build && KEEL_POSTGRES_URL=postgres://... KEEL_REDIS_URL=redis://... node examples/dist/fleet-worker.js
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { agent } from '@keel/core';
import { simulated } from '@keel/simulated';
import { PostgresRunStore } from '@keel/store-postgres';
import { runQueue, runWorker } from '@keel/worker';

/** Runs the example against the PostgreSQL and Redis at these URLs. */
export async function main(
  postgresUrl = process.env.KEEL_POSTGRES_URL ?? 'postgres://127.0.0.1:5432/keel',
  redisUrl = process.env.KEEL_REDIS_URL ?? 'redis://127.0.0.1:6379',
) {
  const model = simulated();
  const prefix = `keel-example-${randomUUID().slice(0, 8)}`; // one fleet's queues; the default is `keel`
  // #region fleet-worker
  const store = new PostgresRunStore({ connectionString: postgresUrl });
  const support = agent({ name: 'support', model, store, durability: { leaseTtlMs: 30_000 } });

  // A worker process (as many as you like, anywhere): takes the runs of its agents.
  const finished = new Map<string, string>();
  let notify = () => {};
  const worker = runWorker({
    agents: [support],
    store,
    redis: redisUrl,
    prefix,
    concurrency: 8,
    onEvent: (event) => {
      if (event.type === 'run-finished') finished.set(event.runId, event.status);
      notify();
    },
  });
  process.once('SIGTERM', () => void worker.close()); // hands its runs back

  // A producer (a web server, `keel submit`): the run is stored as `queued`, then enqueued.
  const queue = runQueue({ store, redis: redisUrl, prefix });
  const { runId } = await queue.submit('support', 'Refund order 42');
  // #endregion
  await new Promise<void>((resolve) => {
    notify = () => finished.has(runId) && resolve();
    notify();
  });
  const record = await store.loadRun(runId);
  await queue.close();
  await worker.close();
  await store.close();
  await model.close();
  return { status: finished.get(runId), stored: record?.status };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
