import { agent, consecutive, KeelError, MemoryRunStore, queuedRun } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { SqliteRunStore } from '@keel/store-sqlite';
import { describe, expect, it } from 'vitest';
import { RunCatalog } from './run-catalog.js';
import { fallbackRun, interruptedRun, runHeldByWorker } from './test-support/runs.js';

/** A memory store that counts the states it hands out. */
class CountingStore extends MemoryRunStore {
  loads = 0;
  override loadRun(runId: string) {
    this.loads++;
    return super.loadRun(runId);
  }
}

describe('RunCatalog', () => {
  it('loads a run state once, and again only when the run moved', async () => {
    const store = new CountingStore();
    const fellBack = await fallbackRun(store);
    const waiting = await interruptedRun(store, { title: 'printer on fire' });
    const catalog = new RunCatalog(store, 100, () => Date.now());
    store.loads = 0;
    const first = await catalog.list();
    expect(first.runs.map((run) => run.runId)).toEqual([waiting.runId, fellBack]);
    expect(store.loads).toBe(2);
    await catalog.list();
    await catalog.list({ status: 'interrupted' });
    expect(store.loads).toBe(2);
    await waiting.agent.resume(waiting.runId, { approvals: { [waiting.key]: { approved: true } } });
    store.loads = 0;
    const after = await catalog.list();
    expect(store.loads).toBe(1);
    expect(after.runs[0]).toMatchObject({ runId: waiting.runId, status: 'completed', pendingDecisions: 0 });
  });

  it('narrows by status, agent and text, and lists the agents', async () => {
    const store = new MemoryRunStore();
    const fellBack = await fallbackRun(store);
    const waiting = await interruptedRun(store, { title: 'printer on fire' });
    const catalog = new RunCatalog(store, 100, () => Date.now());
    const ids = async (filter: Parameters<RunCatalog['list']>[0]) =>
      (await catalog.list(filter)).runs.map((run) => run.runId);
    expect(await ids({ status: 'interrupted' })).toEqual([waiting.runId]);
    expect(await ids({ agentName: 'weather' })).toEqual([fellBack]);
    expect(await ids({ query: 'APPROVAL_REQ' })).toEqual([waiting.runId]);
    // A part of the id: its random end (run ids made close in time share their start, the time they were made).
    expect(await ids({ query: fellBack.slice(-12) })).toEqual([fellBack]);
    expect(await ids({ query: 'nothing like it' })).toEqual([]);
    expect((await catalog.list()).agents).toEqual(['support', 'weather']);
  });

  it("lists each breaker's last move seen by a run", async () => {
    const store = new MemoryRunStore();
    const failing = agent({
      name: 'flaky',
      model: scriptedModel([new KeelError('provider.server_error', 'down')], {
        provider: 'scripted',
        model: 'down',
      }),
      breaker: { strategy: consecutive({ threshold: 1 }) },
      retry: { maxAttempts: 1 },
      store,
    });
    const result = await failing.run('Hello?');
    expect(result.status).toBe('failed');
    const { breakers } = await new RunCatalog(store, 100, () => Date.now()).list();
    expect(breakers).toEqual([
      {
        target: 'model',
        name: 'scripted/down',
        state: 'open',
        atMs: expect.any(Number),
        runId: result.runId,
      },
    ]);
  });

  it('shows a run whose state it cannot read, saying why', async () => {
    const store = new MemoryRunStore();
    await store.createRun({
      runId: 'from-the-future',
      agentName: 'later',
      status: 'completed',
      schemaVersion: 99,
      state: { schemaVersion: 99 },
      createdAtMs: 1,
    });
    const [row] = (await new RunCatalog(store, 100, () => Date.now()).list()).runs;
    expect(row).toMatchObject({
      runId: 'from-the-future',
      status: 'completed',
      problem: expect.stringMatching(/^config\.invalid: .*newer/),
    });
  });
});

describe('RunCatalog, fleets', () => {
  it('lists a queued run as queued, with its agent, task and wait, not as a problem', async () => {
    const store = new SqliteRunStore(':memory:');
    await fallbackRun(store);
    await store.createRun(
      queuedRun({ runId: 'waits', agentName: 'support', input: 'Refund order 42', nowMs: 1_000 }),
    );
    const catalog = new RunCatalog(store, 100, () => 4_000);
    const [row] = (await catalog.list({ status: 'queued' })).runs;
    expect(row).toEqual({
      runId: 'waits',
      agentName: 'support',
      status: 'queued',
      version: 1,
      createdAtMs: 1_000,
      updatedAtMs: 1_000,
      task: 'Refund order 42',
      queuedMs: 3_000,
    });
    expect((await catalog.list({ query: 'refund' })).runs.map((run) => run.runId)).toEqual(['waits']);
    expect((await catalog.list()).agents).toEqual(['support', 'weather']);
  });

  it('takes the task of a queued conversation from its last user message, and shows a run cancelled while queued', async () => {
    const store = new SqliteRunStore(':memory:');
    await store.createRun(
      queuedRun({
        runId: 'conversation',
        agentName: 'support',
        input: [
          { role: 'user', content: 'Hello' },
          { role: 'user', content: 'Where is order 7?' },
        ],
        nowMs: 1_000,
      }),
    );
    expect(await store.requestCancellation('conversation', 'not needed', 1_500)).toBe('cancelled');
    const [row] = (await new RunCatalog(store, 100, () => 9_000).list()).runs;
    expect(row).toMatchObject({ status: 'cancelled', task: 'Where is order 7?', queuedMs: 500 });
    expect(row).not.toHaveProperty('problem');
  });

  it('shows the worker that holds a running run, its wait in the queue, and when its lease has ended', async () => {
    const store = new SqliteRunStore(':memory:');
    const submittedAtMs = Date.now() - 5_000;
    const held = await runHeldByWorker(store, {
      owner: 'host-a:4242:0a1b2c3d',
      task: 'When does order 42 ship?',
      submittedAtMs,
    });
    try {
      const lease = (await store.loadRun(held.runId))!.lease!;
      const [row] = (await new RunCatalog(store, 100, () => Date.now()).list()).runs;
      expect(row).toMatchObject({
        runId: held.runId,
        status: 'running',
        task: 'When does order 42 ship?',
        worker: { owner: 'host-a:4242:0a1b2c3d', leaseExpiresAtMs: lease.expiresAtMs, leaseEnded: false },
      });
      expect(row!.queuedMs).toBeGreaterThanOrEqual(5_000);
      const later = await new RunCatalog(store, 100, () => lease.expiresAtMs + 1).list({
        query: 'host-a:4242',
      });
      expect(later.runs[0]?.worker).toMatchObject({ leaseEnded: true });
    } finally {
      held.release();
    }
    expect((await held.finished).status).toBe('completed');
    const [ended] = (await new RunCatalog(store, 100, () => Date.now()).list()).runs;
    expect(ended).toMatchObject({ status: 'completed', task: 'When does order 42 ship?' });
    expect(ended).not.toHaveProperty('worker');
  });

  it('follows a lease that moves without a new version, loading no state for it', async () => {
    const store = new CountingStore();
    await store.createRun(queuedRun({ runId: 'taken', agentName: 'support', input: 'go', nowMs: 1_000 }));
    const catalog = new RunCatalog(store, 100, () => 2_000);
    expect((await catalog.list()).runs[0]).not.toHaveProperty('worker');
    store.loads = 0;
    await store.acquireLease('taken', 'worker-b', 30_000, 1_500);
    const [row] = (await catalog.list()).runs;
    expect(row).toMatchObject({
      status: 'queued',
      queuedMs: 1_000,
      worker: { owner: 'worker-b', leaseExpiresAtMs: 31_500, leaseEnded: false },
    });
    expect(store.loads).toBe(0);
  });
});
