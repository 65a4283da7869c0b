import { type JsonValue, MemoryRunStore, queuedRun, readQueuedState } from '@keel/core';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { answerJobIdOf, jobIdOf, queueNameOf } from './fleet-names.js';
import { type RunQueue, type RunQueueOptions, runQueue } from './run-queue.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

const opened: RunQueue[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((queue) => queue.close()));
});

function open(store = new MemoryRunStore(), options: Partial<RunQueueOptions> = {}) {
  const prefix = `keel-queue-${Math.random().toString(36).slice(2, 10)}`;
  const queue = runQueue({ store, redis: options.redis ?? redisUrl!, prefix, ...options });
  opened.push(queue);
  return { queue, store, prefix };
}

describe('runQueue', () => {
  it('stores a submitted run as queued before it enqueues it under the run id, in its agent’s queue', async () => {
    const { queue, store, prefix } = open();
    const submitted = await queue.submit('support', 'Refund order 42', { runId: 'r-1' });
    expect(submitted).toEqual({ runId: 'r-1', enqueued: true });
    const record = await store.loadRun('r-1');
    expect(record).toMatchObject({ status: 'queued', agentName: 'support' });
    expect(readQueuedState(record!.state)?.input).toBe('Refund order 42');
    expect((await store.listRuns({ status: 'queued' })).map((run) => run.runId)).toEqual(['r-1']);
    const bull = new Queue(queueNameOf('support'), { connection: { url: redisUrl }, prefix });
    try {
      const job = await bull.getJob(jobIdOf('r-1'));
      expect(job?.data).toEqual({ runId: 'r-1', agentName: 'support' });
      expect(await job?.getState()).toBe('waiting');
    } finally {
      await bull.close();
    }
    const generated = await queue.submit('support', [{ role: 'user', content: 'hello' }]);
    expect(generated.runId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses what it cannot run with config.invalid, storing nothing', async () => {
    const { queue, store } = open();
    await queue.submit('support', 'first', { runId: 'taken' });
    await expect(queue.submit('support', 'again', { runId: 'taken' })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('already exists'),
    });
    await expect(queue.submit('support', '   ')).rejects.toMatchObject({ code: 'config.invalid' });
    await expect(queue.submit('', 'go')).rejects.toMatchObject({ code: 'config.invalid' });
    await expect(queue.submit('support', 'go', { runid: 'x' } as never)).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('did you mean runId'),
    });
    expect((await store.listRuns()).map((run) => run.runId)).toEqual(['taken']);
    expect(() => runQueue({ store, redis: 'http://localhost' })).toThrow(/redis must be a redis:\/\/ URL/);
    expect(() => runQueue({ store: {} as never, redis: redisUrl! })).toThrow(/store must be a RunStore/);
    expect(() => runQueue({ store, redis: redisUrl!, prefix: 'a:b' })).toThrow(/prefix must be/);
  });

  it('keeps a run it could not enqueue (Redis unreachable) as queued, for a worker’s sweep', async () => {
    const { queue, store } = open(new MemoryRunStore(), {
      redis: 'redis://127.0.0.1:1',
      enqueueTimeoutMs: 200,
    });
    const submitted = await queue.submit('support', 'go', { runId: 'offline' });
    expect(submitted).toEqual({ runId: 'offline', enqueued: false });
    expect((await store.loadRun('offline'))?.status).toBe('queued');
  });

  it('reports the failures of its Redis client to onError', async () => {
    const failures: string[] = [];
    const { queue } = open(new MemoryRunStore(), {
      redis: 'redis://127.0.0.1:1',
      enqueueTimeoutMs: 100,
      onError: (error) => failures.push(error.code),
    });
    expect((await queue.submit('support', 'go')).enqueued).toBe(false);
    expect(failures[0]).toBe('store.unavailable');
  });

  it('cancels a queued run at once', async () => {
    const { queue, store } = open();
    await queue.submit('support', 'go', { runId: 'c-1' });
    expect(await queue.cancel('c-1', 'not needed')).toBe('cancelled');
    expect(await store.loadRun('c-1')).toMatchObject({
      status: 'cancelled',
      cancellation: { reason: 'not needed' },
    });
    await expect(queue.cancel('missing')).rejects.toMatchObject({ code: 'store.not_found' });
  });

  it('answers only an interrupted run, and only what it waits for', async () => {
    const store = new MemoryRunStore();
    const { queue } = open(store);
    await queue.submit('support', 'go', { runId: 'queued' });
    await expect(queue.answer('queued', { approvals: { k: { approved: true } } })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('queued, not interrupted'),
    });
    await expect(queue.answer('missing', {})).rejects.toMatchObject({ code: 'store.not_found' });
    // An interrupted run waiting for one approval.
    await store.createRun(queuedRun({ runId: 'waits', agentName: 'support', input: 'go', nowMs: 1 }));
    await store.acquireLease('waits', 'w', 1_000, 1);
    await store.saveCheckpoint('waits', {
      expectedVersion: 1,
      owner: 'w',
      status: 'interrupted',
      schemaVersion: 3,
      state: interruptedState('waits'),
      nowMs: 2,
    });
    await expect(
      queue.answer('waits', { approvals: { 'waits:1:9': { approved: true } } }),
    ).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('pending: waits:1:0'),
    });
    await expect(queue.answer('waits', { decisions: { 'waits:1:0': 'execute' } })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('pending: nothing of that kind'),
    });
    await expect(
      queue.answer('waits', { approvals: { 'waits:1:0': { approved: 'yes' } as never } }),
    ).rejects.toMatchObject({ code: 'config.invalid' });
    await queue.answer('waits', { approvals: { 'waits:1:0': { approved: true } } });
  });

  it('adds one answer job per run version: a retried answer (the first reached Redis late) adds no second', async () => {
    const store = new MemoryRunStore();
    const { queue, prefix } = open(store);
    await store.createRun(queuedRun({ runId: 'waits', agentName: 'support', input: 'go', nowMs: 1 }));
    await store.acquireLease('waits', 'w', 1_000, 1);
    await store.saveCheckpoint('waits', {
      expectedVersion: 1,
      owner: 'w',
      status: 'interrupted',
      schemaVersion: 3,
      state: interruptedState('waits'),
      nowMs: 2,
    });
    const answers = { approvals: { 'waits:1:0': { approved: true as const } } };
    await queue.answer('waits', answers);
    await queue.answer('waits', answers);
    const bull = new Queue(queueNameOf('support'), { connection: { url: redisUrl }, prefix });
    try {
      const jobs = await bull.getJobs(['waiting']);
      expect(jobs.map((job) => job.id)).toEqual([answerJobIdOf('waits', 2)]);
      expect(jobs[0]?.data).toEqual({ runId: 'waits', agentName: 'support', ...answers });
    } finally {
      await bull.close();
    }
  });
});

/** A run state interrupted at step 1 for the approval of call 0. */
function interruptedState(runId: string): JsonValue {
  const call = { id: 'c0', name: 'send_mail', arguments: '{"to":"x@elsewhere.org"}' };
  const state = {
    schemaVersion: 3,
    runId,
    agentName: 'support',
    status: 'interrupted',
    phase: 'tools',
    step: 1,
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call] },
    ],
    pendingToolCalls: [
      { callIndex: 0, call, idempotencyKey: `${runId}:1:0`, status: 'pending', attempts: 0 },
    ],
    pendingDecisions: [
      {
        kind: 'approval',
        idempotencyKey: `${runId}:1:0`,
        toolName: 'send_mail',
        arguments: { to: 'x@elsewhere.org' },
        step: 1,
        callIndex: 0,
      },
    ],
    modelIndex: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    partialOutput: '',
    continuations: 0,
    outputCorrections: 0,
    stopReason: 'approval_required',
    startedAtMs: 1,
    deadlineAtMs: 1_000_000,
    report: {},
  };
  return JSON.parse(JSON.stringify(state)) as JsonValue;
}
