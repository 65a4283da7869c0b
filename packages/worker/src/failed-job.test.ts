// A job that fails for good ends its run `failed` with a typed error: no run waits forever for a job that will not
// come. Against the test Redis, with a BullMQ worker of the test's own standing in for workers that die.
import { agent, MemoryRunStore, queuedRun, type RunStore } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetFixture } from './fleet-fixture.js';
import { queueNameOf } from './fleet-names.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

let fixture: FleetFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function desk(store: RunStore) {
  return agent({
    name: 'desk',
    model: scriptedModel(() => ({ content: 'done' })),
    store,
    durability: { leaseTtlMs: 2_000 },
  });
}

describe('a job that fails for good', () => {
  it('ends a run its agent refuses to resume as failed, with the agent’s error', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    // A run left by a newer keel, a minute ago: this one cannot read its state.
    const thenMs = Date.now() - 60_000;
    await store.createRun(queuedRun({ runId: 'newer', agentName: 'desk', input: 'go', nowMs: thenMs }));
    await store.acquireLease('newer', 'elsewhere', 1_000, thenMs);
    await store.saveCheckpoint('newer', {
      expectedVersion: 1,
      owner: 'elsewhere',
      status: 'running',
      schemaVersion: 99,
      state: { schemaVersion: 99, runId: 'newer' },
      nowMs: thenMs,
    });
    const worker = fixture.worker([desk(store)]);
    expect(await worker.sweep()).toEqual(['newer']);
    expect(await fixture.finished('newer')).toMatchObject({
      status: 'failed',
      stopReason: 'internal_error',
      errorCode: 'config.invalid',
    });
    const ended = await store.loadRun('newer');
    expect(ended).toMatchObject({ status: 'failed', state: { schemaVersion: 99 } });
    expect(ended?.lease).toBeUndefined();
    // Failed for good: the sweep leaves it.
    expect(await worker.sweep()).toEqual([]);
  });

  it('ends a run whose job lost its worker more than maxStalls times as failed (policy.retries_exhausted)', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const { runId } = await fixture.queue.submit('desk', 'go');
    // Workers that take the job and die, twice: nothing renews its lock, BullMQ's stalled check takes it back.
    const dying = new Worker(queueNameOf('desk'), null, {
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
    fixture.worker([desk(store)], { maxStalls: 1 });
    const finished = await fixture.finished(runId);
    expect(finished).toMatchObject({ status: 'failed', errorCode: 'policy.retries_exhausted' });
    const ended = await store.loadRun(runId);
    expect(ended).toMatchObject({
      status: 'failed',
      state: { queued: true, error: { code: 'policy.retries_exhausted' } },
    });
  });
});
