import type { RunStore, StepCommit } from '../spec/run-store.js';
import { checkpointBy, codeOf, createContractRun, errorOf, NOW_MS, runIds } from './contract-support.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

/**
 * The part of the RunStore contract a fleet of workers rests on: queued runs, the lease holder in records and
 * listings, and `commitStep` (a step's writes, all or nothing). Run by `runStoreContract`.
 */
export function runStoreFleetContract(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`RunStore contract: ${name}: fleets`, () => {
    let store: RunStore;
    const newRunId = runIds('fleet');
    const createRun = (runId: string) => createContractRun(store, runId);
    const commitStep = (runId: string, commit: StepCommit) => {
      if (store.commitStep === undefined) throw new Error(`${name} has no commitStep`);
      return store.commitStep(runId, commit);
    };
    const started = (runId: string, callIndex: number) => ({
      runId,
      idempotencyKey: `${runId}:1:${callIndex}`,
      step: 1,
      callIndex,
      toolName: 'send_mail',
      startedAtMs: NOW_MS,
    });

    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('keeps a queued run queued until a worker takes it, and lists it by that status', async () => {
      const runId = newRunId();
      await store.createRun({
        runId,
        agentName: 'contract',
        status: 'queued',
        schemaVersion: 1,
        state: { queued: true },
        createdAtMs: NOW_MS,
      });
      expect(await store.loadRun(runId)).toMatchObject({ status: 'queued', version: 1 });
      expect((await store.listRuns({ status: 'queued' })).map((run) => run.runId)).toContain(runId);
      await store.acquireLease(runId, 'worker-a', 10_000, NOW_MS);
      expect(
        await store.saveCheckpoint(
          runId,
          checkpointBy('worker-a', { expectedVersion: 1, state: { step: 0 } }),
        ),
      ).toBe(2);
      expect(await store.loadRun(runId)).toMatchObject({ status: 'running', version: 2 });
      expect((await store.listRuns({ status: 'queued' })).map((run) => run.runId)).not.toContain(runId);
    });

    it('cancels a queued run at once, even while a worker takes its lease', async () => {
      const runId = newRunId();
      await store.createRun({
        runId,
        agentName: 'contract',
        status: 'queued',
        schemaVersion: 1,
        state: { queued: true },
        createdAtMs: NOW_MS,
      });
      await store.acquireLease(runId, 'worker-a', 10_000, NOW_MS);
      expect(await store.requestCancellation(runId, 'not needed', NOW_MS + 1)).toBe('cancelled');
      expect(
        await codeOf(store.saveCheckpoint(runId, checkpointBy('worker-a', { expectedVersion: 1 }))),
      ).toBe('store.conflict');
      expect(await store.loadRun(runId)).toMatchObject({ status: 'cancelled', version: 2 });
    });

    it('creates a run leased to its owner in the same write', async () => {
      const runId = newRunId();
      const created = await store.createRun({
        runId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0 },
        createdAtMs: NOW_MS,
        lease: { owner: 'worker-a', expiresAtMs: NOW_MS + 5_000 },
      });
      expect(created.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 5_000 });
      expect((await store.loadRun(runId))?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 5_000 });
      expect(await codeOf(store.acquireLease(runId, 'worker-b', 1_000, NOW_MS + 4_999))).toBe(
        'store.conflict',
      );
      expect(await store.saveCheckpoint(runId, checkpointBy('worker-a', { expectedVersion: 1 }))).toBe(2);
      await store.acquireLease(runId, 'worker-b', 1_000, NOW_MS + 5_000);
    });

    it('names the lease holder in records and listings, expired or not, until it is released', async () => {
      const runId = newRunId();
      await createRun(runId);
      expect((await store.loadRun(runId))?.lease).toBeUndefined();
      await store.acquireLease(runId, 'worker-a', 5_000, NOW_MS);
      expect((await store.loadRun(runId))?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 5_000 });
      const listed = (await store.listRuns({ status: 'running', limit: 1000 })).find(
        (run) => run.runId === runId,
      );
      expect(listed?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 5_000 });
      await store.releaseLease(runId, 'worker-a');
      expect((await store.loadRun(runId))?.lease).toBeUndefined();
    });

    it('commits ledger starts, a checkpoint and a lease renewal together', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'worker-a', 1_000, NOW_MS);
      const version = await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 1, state: { step: 1 }, nowMs: NOW_MS + 10 }),
        toolsStarted: [started(runId, 0), started(runId, 1)],
        leaseTtlMs: 30_000,
      });
      expect(version).toBe(2);
      const record = await store.loadRun(runId);
      expect(record).toMatchObject({ version: 2, state: { step: 1 }, updatedAtMs: NOW_MS + 10 });
      expect(record?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 10 + 30_000 });
      expect((await store.ledger(runId)).map((entry) => [entry.idempotencyKey, entry.status])).toEqual([
        [`${runId}:1:0`, 'started'],
        [`${runId}:1:1`, 'started'],
      ]);
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 2, state: { step: 2 } }),
        toolsStarted: [{ ...started(runId, 0), startedAtMs: NOW_MS + 99 }],
        toolsCompleted: [
          {
            idempotencyKey: `${runId}:1:0`,
            result: { status: 'success', content: 'sent' },
            completedAtMs: NOW_MS + 20,
          },
        ],
      });
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 3, state: { step: 3, note: 'é' } }),
        stateText: JSON.stringify({ step: 3, note: 'é' }),
        toolsCompleted: [
          {
            idempotencyKey: `${runId}:1:0`,
            result: { status: 'success', content: 'again' },
            completedAtMs: NOW_MS + 30,
          },
        ],
      });
      const ledger = await store.ledger(runId);
      expect(ledger[0]).toMatchObject({
        status: 'completed',
        startedAtMs: NOW_MS,
        result: { status: 'success', content: 'sent' },
        completedAtMs: NOW_MS + 20,
      });
      expect(ledger[1]).toMatchObject({ status: 'started' });
      // Without leaseTtlMs the lease is left as it was; a state given as text reads back as the value.
      expect(await store.loadRun(runId)).toMatchObject({ version: 4, state: { step: 3, note: 'é' } });
      expect((await store.loadRun(runId))?.lease?.expiresAtMs).toBe(NOW_MS + 10 + 30_000);
    });

    it('writes nothing at all when the checkpoint is refused', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'worker-a', 1_000, NOW_MS);
      const stale = await errorOf(
        commitStep(runId, {
          checkpoint: checkpointBy('worker-a', { expectedVersion: 7, state: { step: 9 } }),
          toolsStarted: [started(runId, 0)],
          leaseTtlMs: 60_000,
        }),
      );
      expect(stale).toMatchObject({ code: 'store.conflict', data: { expectedVersion: 7, actualVersion: 1 } });
      const intruder = await errorOf(
        commitStep(runId, {
          checkpoint: checkpointBy('worker-b', { expectedVersion: 1, state: { step: 9 } }),
          toolsStarted: [started(runId, 0)],
          leaseTtlMs: 60_000,
        }),
      );
      expect(intruder).toMatchObject({ code: 'store.conflict', data: { holder: 'worker-a' } });
      const record = await store.loadRun(runId);
      expect(record).toMatchObject({ version: 1, state: { step: 0 } });
      expect(record?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 1_000 });
      expect(await store.ledger(runId)).toEqual([]);
      expect(
        await codeOf(
          commitStep(`${runId}-missing`, { checkpoint: checkpointBy('worker-a', { expectedVersion: 1 }) }),
        ),
      ).toBe('store.not_found');
    });

    it('records calls that ran within one write (toolsRan, ranCallsInCommit) as completed, with the checkpoint or not at all', async () => {
      if (store.ranCallsInCommit !== true) return;
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'worker-a', 1_000, NOW_MS);
      const ran = (callIndex: number, content: string) => ({
        ...started(runId, callIndex),
        result: { status: 'success', content },
        completedAtMs: NOW_MS + 20,
      });
      // A checkpoint refused writes none of them.
      const refused = commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 7, state: { step: 1 } }),
        toolsRan: [ran(0, 'lost')],
      });
      expect(await codeOf(refused)).toBe('store.conflict');
      expect(await store.ledger(runId)).toEqual([]);
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 1, state: { step: 1 } }),
        toolsStarted: [started(runId, 1)],
        toolsRan: [ran(0, 'looked up')],
      });
      // A call the ledger holds as started is completed by a later run of it; a completed one keeps its result.
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 2, state: { step: 2 } }),
        toolsRan: [ran(1, 'sent'), { ...ran(0, 'again'), completedAtMs: NOW_MS + 99 }],
      });
      const ledger = await store.ledger(runId);
      expect(ledger).toEqual([
        {
          ...started(runId, 0),
          status: 'completed',
          result: { status: 'success', content: 'looked up' },
          completedAtMs: NOW_MS + 20,
        },
        {
          ...started(runId, 1),
          status: 'completed',
          result: { status: 'success', content: 'sent' },
          completedAtMs: NOW_MS + 20,
        },
      ]);
      expect(await store.loadRun(runId)).toMatchObject({ version: 3, state: { step: 2 } });
    });

    it('refuses, writing nothing, to complete a call the ledger does not hold', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'worker-a', 1_000, NOW_MS);
      const refused = commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 1, state: { step: 1 } }),
        toolsStarted: [started(runId, 1)],
        toolsCompleted: [{ idempotencyKey: `${runId}:1:0`, result: null, completedAtMs: NOW_MS }],
      });
      expect(await codeOf(refused)).toBe('store.not_found');
      expect(await store.loadRun(runId)).toMatchObject({ version: 1, state: { step: 0 } });
      expect(await store.ledger(runId)).toEqual([]);
    });

    it('creates a run with its first commit (createsInCommit): leased, with its ledger and messages, all or nothing', async () => {
      if (store.createsInCommit !== true) return;
      const runId = newRunId();
      const create = { agentName: 'contract', createdAtMs: NOW_MS };
      const messages =
        store.messageLog === true ? { start: 0, messages: [{ role: 'user', content: 'go' }] } : undefined;
      const state =
        messages === undefined
          ? { step: 1, messages: [{ role: 'user', content: 'go' }] }
          : { step: 1, messages: 1 };
      const first = {
        create,
        checkpoint: checkpointBy('worker-a', {
          expectedVersion: 0,
          state,
          nowMs: NOW_MS + 10,
          ...(messages && { messages }),
        }),
        toolsStarted: [started(runId, 0)],
        leaseTtlMs: 30_000,
      };
      expect(await commitStep(runId, first)).toBe(1);
      const record = await store.loadRun(runId);
      expect(record).toMatchObject({
        runId,
        agentName: 'contract',
        status: 'running',
        version: 1,
        state: { step: 1, messages: [{ role: 'user', content: 'go' }] },
        createdAtMs: NOW_MS,
        updatedAtMs: NOW_MS + 10,
      });
      expect(record?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 10 + 30_000 });
      expect((await store.listRuns({ status: 'running', limit: 1000 })).map((run) => run.runId)).toContain(
        runId,
      );
      expect((await store.ledger(runId)).map((entry) => entry.status)).toEqual(['started']);
      // The id is taken now: a second create (another process, or the same write sent again) writes nothing.
      const again = await errorOf(commitStep(runId, { ...first, toolsStarted: [started(runId, 1)] }));
      expect(again).toMatchObject({ code: 'store.conflict' });
      expect(await store.loadRun(runId)).toMatchObject({ version: 1, state: { step: 1 } });
      expect(await store.ledger(runId)).toHaveLength(1);
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 1, status: 'completed', state: { step: 2 } }),
        toolsCompleted: [{ idempotencyKey: `${runId}:1:0`, result: 'sent', completedAtMs: NOW_MS + 20 }],
        releaseLease: true,
      });
      expect(await store.loadRun(runId)).toMatchObject({
        status: 'completed',
        version: 2,
        state: { step: 2 },
      });
      // A create refused (a completion of a call its empty ledger cannot hold) stores no run.
      const refusedId = `${runId}-refused`;
      const refused = commitStep(refusedId, {
        create,
        checkpoint: checkpointBy('worker-a', { expectedVersion: 0, state: { step: 1 } }),
        toolsStarted: [started(refusedId, 1)],
        toolsCompleted: [{ idempotencyKey: `${refusedId}:1:0`, result: null, completedAtMs: NOW_MS }],
      });
      expect(await codeOf(refused)).toBe('store.not_found');
      expect(await store.loadRun(refusedId)).toBeUndefined();
      expect(await store.ledger(refusedId)).toEqual([]);
      // A run that ends with its first write is created with its end, its lease free.
      const endedId = `${runId}-ended`;
      await commitStep(endedId, {
        create,
        checkpoint: checkpointBy('worker-a', { expectedVersion: 0, status: 'completed', state: { step: 1 } }),
        releaseLease: true,
      });
      const ended = await store.loadRun(endedId);
      expect(ended).toMatchObject({ status: 'completed', version: 1, state: { step: 1 } });
      expect(ended?.lease).toBeUndefined();
    });

    it('takes a commit from the holder of an expired lease nobody took, renewing it; frees it at the end', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'worker-a', 1_000, NOW_MS);
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', { expectedVersion: 1, nowMs: NOW_MS + 5_000 }),
        leaseTtlMs: 1_000,
      });
      expect((await store.loadRun(runId))?.lease).toEqual({ owner: 'worker-a', expiresAtMs: NOW_MS + 6_000 });
      await commitStep(runId, {
        checkpoint: checkpointBy('worker-a', {
          expectedVersion: 2,
          status: 'completed',
          nowMs: NOW_MS + 5_500,
        }),
        releaseLease: true,
      });
      const record = await store.loadRun(runId);
      expect(record).toMatchObject({ status: 'completed', version: 3 });
      expect(record?.lease).toBeUndefined();
      await store.acquireLease(runId, 'worker-b', 1_000, NOW_MS + 5_600);
    });
  });
}
