// Answers reach the run whatever happened to the answer before: a worker that died while applying it (the ledger
// holds the abandoned call's result, the checkpoint does not), a job of the same id that failed for good, or a
// cancellation that got there first. Against the test Redis and a SQLite file.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type Clock, type RunStore, tool } from '@keel/core';
import { FakeClock, FaultyRunStore, scriptedModel } from '@keel/core/testing';
import { SqliteRunStore } from '@keel/store-sqlite';
import { Queue, Worker } from 'bullmq';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FleetFixture } from './fleet-fixture.js';
import { answerJobIdOf, jobIdOf, queueNameOf } from './fleet-names.js';
import type { WorkerEvent } from './worker-events.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

const directory = mkdtempSync(join(tmpdir(), 'keel-answers-'));
let fixture: FleetFixture | undefined;
let store: RunStore | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  await store?.close();
  store = undefined;
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** An agent that charges once (not idempotent) and then answers `finished`; `hold` holds the charge open. */
function chargingAgent(
  runs: RunStore,
  name: string,
  hold?: { entered: () => void; released: Promise<void> },
  clock?: Clock,
) {
  return agent({
    name,
    model: scriptedModel((request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { content: 'finished' }
        : { toolCalls: [{ name: 'charge' }] },
    ),
    tools: [
      tool({
        name: 'charge',
        description: 'charges the card',
        input: { type: 'object', properties: {} } as const,
        execute: async () => {
          if (hold !== undefined) {
            hold.entered();
            await hold.released;
          }
          return 'charged';
        },
      }),
    ],
    store: runs,
    ...(clock === undefined ? {} : { clock }),
    durability: { leaseTtlMs: 300, storeMaxAttempts: 1 },
  });
}

/** A run interrupted for a decision about its charge: its first process died inside the call. */
async function interruptedRun(runs: SqliteRunStore, name: string): Promise<{ runId: string; key: string }> {
  const runId = `answers-${randomUUID()}`;
  const dying = new FaultyRunStore(runs);
  let entered!: () => void;
  let release!: () => void;
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const running = chargingAgent(dying, name, { entered, released }).run('charge me', { runId });
  await inside;
  dying.down = true; // the process dies inside the call: nothing more reaches the store
  release();
  expect((await running).stopReason).toBe('store_unavailable');
  // Another process, once the dead one's lease ran out (its clock a minute on): it asks for a decision.
  const waiting = await chargingAgent(runs, name, undefined, new FakeClock(Date.now() + 60_000)).resume(
    runId,
  );
  expect(waiting.stopReason).toBe('decision_required');
  return { runId, key: `${runId}:1:0` };
}

function openFleet() {
  const runs = new SqliteRunStore(join(directory, `${randomUUID()}.db`));
  store = runs;
  fixture = new FleetFixture(runs, redisUrl!);
  return { runs, fleet: fixture, name: `desk-${randomUUID().slice(0, 8)}` };
}

const endOf = (fleet: FleetFixture, runId: string) =>
  fleet.event(
    (event: WorkerEvent) =>
      (event.type === 'run-finished' || event.type === 'worker-error') &&
      'runId' in event &&
      event.runId === runId,
  );

describe('answers sent through the queue', () => {
  it('reach a run whose last worker died between the ledger write of an abandon and its checkpoint', async () => {
    const { runs, fleet, name } = openFleet();
    const { runId, key } = await interruptedRun(runs, name);
    // A worker applied the abandon and died: the ledger holds the abandoned result, the run is still interrupted.
    const dying = new FaultyRunStore(runs);
    dying.writeLimit = 2; // the lease, then the ledger's result; not the checkpoint
    const died = await chargingAgent(dying, name)
      .resume(runId, { decisions: { [key]: 'abandon' } })
      .catch((error: unknown) => error);
    expect((died as { stopReason?: string }).stopReason).toBe('store_unavailable');
    expect((await runs.ledger(runId)).find((entry) => entry.idempotencyKey === key)?.status).toBe(
      'completed',
    );
    expect((await runs.loadRun(runId))?.status).toBe('interrupted');

    // The answer job, taken again by a worker (or the operator answering again), goes on with the run.
    fleet.worker([chargingAgent(runs, name)]);
    await fleet.queue.answer(runId, { decisions: { [key]: 'abandon' } });
    expect(await endOf(fleet, runId)).toMatchObject({ type: 'run-finished', status: 'completed' });
    const told = (await runs.loadRun(runId))?.state as { messages: Array<{ role: string; content: string }> };
    const result = told.messages.find((message) => message.role === 'tool');
    expect(JSON.parse(result?.content ?? '{}')).toMatchObject({ error: { data: { outcome: 'unknown' } } });
  });

  it('reach the run when sent again after the job of the same answer failed for good', async () => {
    const { runs, fleet, name } = openFleet();
    const { runId, key } = await interruptedRun(runs, name);
    await fleet.queue.answer(runId, { decisions: { [key]: 'abandon' } });
    const record = await runs.loadRun(runId);
    const jobId = answerJobIdOf(runId, record!.version);
    // The job fails for good in a worker of the test's own (as the answer did before a fix, kept a week).
    const failing = new Worker(queueNameOf(name), null, {
      connection: { url: redisUrl },
      prefix: fleet.prefix,
      autorun: false,
    });
    const bull = new Queue(queueNameOf(name), { connection: { url: redisUrl }, prefix: fleet.prefix });
    try {
      const job = await failing.getNextJob('failing', { block: true });
      expect(job?.id).toBe(jobId);
      await job!.moveToFailed(new Error('refused'), 'failing', false);
      expect(await (await bull.getJob(jobId))?.getState()).toBe('failed');

      await fleet.queue.answer(runId, { decisions: { [key]: 'abandon' } });
      expect(await (await bull.getJob(jobId))?.getState()).toBe('waiting');
    } finally {
      await failing.close(true);
      await bull.close();
    }
    fleet.worker([chargingAgent(runs, name)]);
    expect(await endOf(fleet, runId)).toMatchObject({ type: 'run-finished', status: 'completed' });
  });
});

/** A store that cancels the run right after the `cancelAtLoad`-th load of it from now (a cancellation racing). */
class RacingStore extends SqliteRunStore {
  cancelAtLoad = 0;
  override async loadRun(runId: string) {
    const record = await super.loadRun(runId);
    if (this.cancelAtLoad > 0 && --this.cancelAtLoad === 0) {
      await this.requestCancellation(runId, 'the customer hung up', Date.now());
    }
    return record;
  }
}

describe('an answer racing a cancellation', () => {
  it('ends the run cancelled, with no failed job and no worker-error', async () => {
    const runs = new RacingStore(join(directory, `${randomUUID()}.db`));
    store = runs;
    const fleet = new FleetFixture(runs, redisUrl!);
    fixture = fleet;
    const name = `desk-${randomUUID().slice(0, 8)}`;
    const { runId, key } = await interruptedRun(runs, name);
    fleet.worker([chargingAgent(runs, name)]);
    // The answer's own look at the run, then the worker's: the cancellation lands between the worker's look and
    // the resume.
    runs.cancelAtLoad = 2;
    await fleet.queue.answer(runId, { decisions: { [key]: 'abandon' } });
    expect(await endOf(fleet, runId)).toMatchObject({
      type: 'run-finished',
      status: 'cancelled',
      stopReason: 'cancelled',
    });
    expect(fleet.events.filter((event) => event.type === 'worker-error')).toEqual([]);
    const bull = new Queue(queueNameOf(name), { connection: { url: redisUrl }, prefix: fleet.prefix });
    try {
      expect(await bull.getJobs(['failed'])).toEqual([]);
    } finally {
      await bull.close();
    }
  });
});

describe('a run cancelled while its worker is dead', () => {
  it('ends with its state saying so when its job is taken again', async () => {
    const { runs, fleet, name } = openFleet();
    const runId = `dead-${randomUUID()}`;
    // Its worker died inside the charge a minute ago: the run is running, its lease long run out.
    const dying = new FaultyRunStore(runs);
    let entered!: () => void;
    let release!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = chargingAgent(dying, name, { entered, released }, new FakeClock(Date.now() - 60_000)).run(
      'charge me',
      { runId },
    );
    await inside;
    dying.down = true;
    release();
    await running;
    expect((await runs.loadRun(runId))?.status).toBe('running');
    expect(await fleet.queue.cancel(runId, 'the customer hung up')).toBe('cancelled');
    // Its job comes back (it stalled when its worker died) and a worker takes it.
    const bull = new Queue(queueNameOf(name), { connection: { url: redisUrl }, prefix: fleet.prefix });
    try {
      await bull.add('run', { runId, agentName: name }, { jobId: jobIdOf(runId) });
    } finally {
      await bull.close();
    }
    fleet.worker([chargingAgent(runs, name)]);
    expect(await endOf(fleet, runId)).toMatchObject({ type: 'run-finished', status: 'cancelled' });
    const record = await runs.loadRun(runId);
    expect(record).toMatchObject({
      status: 'cancelled',
      state: {
        status: 'cancelled',
        stopReason: 'cancelled',
        error: { code: 'run.cancelled', message: expect.stringContaining('the customer hung up') },
      },
    });
    expect(record?.lease).toBeUndefined();
  });
});
