// A job that fails for good ends its run `failed` with a typed error: no run waits forever for a job that will not
// come. Against the test Redis and PostgreSQL and a SQLite file, with a BullMQ worker of the test's own standing in
// for workers that die.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, queuedRun, type RunStore } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';
import { Worker } from 'bullmq';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FleetFixture } from './fleet-fixture.js';
import { queueNameOf } from './fleet-names.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

const postgresUrl = process.env.KEEL_TEST_POSTGRES_URL;
if (postgresUrl === undefined)
  throw new Error('KEEL_TEST_POSTGRES_URL is not set: the vitest global setup starts PostgreSQL');

const directory = mkdtempSync(join(tmpdir(), 'keel-worker-'));
let fixture: FleetFixture | undefined;
let store: RunStore | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  await store?.close();
  store = undefined;
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const stores: Array<[string, () => RunStore]> = [
  ['SQLite', () => new SqliteRunStore(join(directory, `${randomUUID()}.db`))],
  ['PostgreSQL', () => new PostgresRunStore({ connectionString: postgresUrl })],
];

/** An agent of a name of its own: the PostgreSQL database is shared with other tests, and the sweep goes by name. */
function deskAgent(store: RunStore, name = `desk-${randomUUID().slice(0, 8)}`) {
  return agent({
    name,
    model: scriptedModel(() => ({ content: 'done' })),
    store,
    durability: { leaseTtlMs: 2_000 },
  });
}

describe.each(stores)('a job that fails for good, on %s', (_name, open) => {
  it('ends a run its agent refuses to resume as failed, with the agent’s error', async () => {
    const runs = open();
    store = runs;
    fixture = new FleetFixture(runs, redisUrl!);
    const desk = deskAgent(runs);
    // A run left by a newer keel, a minute ago: this one cannot read its state.
    const runId = `newer-${randomUUID()}`;
    const thenMs = Date.now() - 60_000;
    await runs.createRun(queuedRun({ runId, agentName: desk.name, input: 'go', nowMs: thenMs }));
    await runs.acquireLease(runId, 'elsewhere', 1_000, thenMs);
    await runs.saveCheckpoint(runId, {
      expectedVersion: 1,
      owner: 'elsewhere',
      status: 'running',
      schemaVersion: 99,
      state: { schemaVersion: 99, runId },
      nowMs: thenMs,
    });
    const worker = fixture.worker([desk]);
    expect(await worker.sweep()).toEqual([runId]);
    expect(await fixture.finished(runId)).toMatchObject({
      status: 'failed',
      stopReason: 'internal_error',
      errorCode: 'config.invalid',
    });
    const ended = await runs.loadRun(runId);
    expect(ended).toMatchObject({ status: 'failed', state: { schemaVersion: 99 } });
    expect(ended?.lease).toBeUndefined();
    // Failed for good: the sweep leaves it.
    expect(await worker.sweep()).toEqual([]);
  });

  it('ends a run whose job lost its worker more than maxStalls times as failed (policy.retries_exhausted)', async () => {
    const runs = open();
    store = runs;
    fixture = new FleetFixture(runs, redisUrl!);
    const desk = deskAgent(runs);
    const { runId } = await fixture.queue.submit(desk.name, 'go');
    // Workers that take the job and die, twice: nothing renews its lock, BullMQ's stalled check takes it back.
    const dying = new Worker(queueNameOf(desk.name), null, {
      connection: { url: redisUrl },
      prefix: fixture.prefix,
      lockDuration: 100,
      stalledInterval: 100,
      maxStalledCount: 1,
      autorun: false,
    });
    try {
      for (let death = 0; death < 2; death++) {
        const job = await dying.getNextJob(`dying-${death}`, { block: true });
        expect(job?.data.runId).toBe(runId);
        void dying.startStalledCheckTimer();
        while ((await job!.getState()) === 'active') await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await dying.close(true);
    }
    fixture.worker([desk], { maxStalls: 1 });
    const finished = await fixture.finished(runId);
    expect(finished).toMatchObject({ status: 'failed', errorCode: 'policy.retries_exhausted' });
    const ended = await runs.loadRun(runId);
    expect(ended).toMatchObject({
      status: 'failed',
      state: { queued: true, error: { code: 'policy.retries_exhausted' } },
    });
    expect(ended?.lease).toBeUndefined();
  });
});
