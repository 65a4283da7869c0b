import { agent, consecutive, KeelError, MemoryRunStore } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { RunCatalog } from './run-catalog.js';
import { fallbackRun, interruptedRun } from './test-support/runs.js';

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
    expect(await ids({ query: fellBack.slice(0, 8) })).toEqual([fellBack]);
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
