import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { RunStore } from '../spec/run-store.js';
import { durableCrashScenarios } from './durable-crash-scenarios.js';
import { durableRunScenarios } from './durable-run-scenarios.js';

const NOW_MS = 1_700_000_000_000;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (KeelError.isInstance(error)) return error.code;
    throw error;
  }
  throw new Error('expected the store to reject');
}

/**
 * The behaviour every RunStore must have, down to durable runs of an agent on it (crashes at every write, approvals,
 * an outage, cancellation from another process, leases). Call it from a test file with a factory that returns a
 * fresh store.
 *
 * @example
 *   runStoreContract('SqliteRunStore', () => new SqliteRunStore(':memory:'));
 */
export function runStoreContract(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`RunStore contract: ${name}`, () => {
    let store: RunStore;
    let counter = 0;
    const newRunId = () => `run-${process.pid}-${Date.now().toString(36)}-${counter++}`;
    const createRun = (runId: string, createdAtMs = NOW_MS) =>
      store.createRun({
        runId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0, messages: [{ role: 'user', content: 'héllo ✓' }] },
        createdAtMs,
      });

    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('creates a run at version 1 and loads it back', async () => {
      const runId = newRunId();
      const created = await createRun(runId);
      expect(created.version).toBe(1);
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({
        runId,
        agentName: 'contract',
        status: 'running',
        version: 1,
        schemaVersion: 1,
      });
      expect(loaded?.state).toEqual({ step: 0, messages: [{ role: 'user', content: 'héllo ✓' }] });
      expect(await store.loadRun(`${runId}-missing`)).toBeUndefined();
    });

    it('rejects a duplicate run id with store.conflict', async () => {
      const runId = newRunId();
      await createRun(runId);
      expect(await codeOf(createRun(runId))).toBe('store.conflict');
    });

    it('saves checkpoints with optimistic versions', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      const checkpoint = { owner: 'owner-a', status: 'running' as const, schemaVersion: 1 };
      expect(
        await store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 1, state: { step: 1 } }),
      ).toBe(2);
      expect(
        await store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 2, state: { step: 2 } }),
      ).toBe(3);
      const stale = store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 2, state: { step: 99 } });
      expect(await codeOf(stale)).toBe('store.conflict');
      const loaded = await store.loadRun(runId);
      expect(loaded?.version).toBe(3);
      expect(loaded?.state).toEqual({ step: 2 });
    });

    it('refuses a checkpoint from a process that does not hold the lease', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      const intruder = store.saveCheckpoint(runId, {
        owner: 'owner-b',
        expectedVersion: 1,
        status: 'running',
        schemaVersion: 1,
        state: {},
      });
      expect(await codeOf(intruder)).toBe('store.conflict');
    });

    it('gives the lease to exactly one owner until it expires', async () => {
      const runId = newRunId();
      await createRun(runId);
      const lease = await store.acquireLease(runId, 'owner-a', 10_000, NOW_MS);
      expect(lease).toEqual({ runId, owner: 'owner-a', expiresAtMs: NOW_MS + 10_000 });
      expect(await codeOf(store.acquireLease(runId, 'owner-b', 10_000, NOW_MS + 5_000))).toBe(
        'store.conflict',
      );
      // The holder may renew.
      expect((await store.acquireLease(runId, 'owner-a', 10_000, NOW_MS + 5_000)).expiresAtMs).toBe(
        NOW_MS + 15_000,
      );
      // After expiry another owner may take it.
      expect((await store.acquireLease(runId, 'owner-b', 10_000, NOW_MS + 15_001)).owner).toBe('owner-b');
      expect(await codeOf(store.acquireLease(runId, 'owner-a', 10_000, NOW_MS + 15_002))).toBe(
        'store.conflict',
      );
    });

    it('lets exactly one of many concurrent claimants take the lease', async () => {
      const runId = newRunId();
      await createRun(runId);
      const claims = await Promise.allSettled(
        Array.from({ length: 8 }, (_, index) => store.acquireLease(runId, `owner-${index}`, 10_000, NOW_MS)),
      );
      expect(claims.filter((claim) => claim.status === 'fulfilled')).toHaveLength(1);
    });

    it('frees a released lease', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 10_000, NOW_MS);
      await store.releaseLease(runId, 'owner-b');
      expect(await codeOf(store.acquireLease(runId, 'owner-b', 10_000, NOW_MS))).toBe('store.conflict');
      await store.releaseLease(runId, 'owner-a');
      expect((await store.acquireLease(runId, 'owner-b', 10_000, NOW_MS)).owner).toBe('owner-b');
    });

    it('reports leasing an unknown run as store.not_found', async () => {
      expect(await codeOf(store.acquireLease(`${newRunId()}-missing`, 'owner-a', 1_000, NOW_MS))).toBe(
        'store.not_found',
      );
    });

    it('keeps a tool ledger: started, then completed once', async () => {
      const runId = newRunId();
      await createRun(runId);
      const started = { runId, idempotencyKey: `${runId}:1:0`, step: 1, callIndex: 0, toolName: 'send_mail' };
      await store.recordToolStarted({ ...started, startedAtMs: NOW_MS });
      await store.recordToolStarted({ ...started, startedAtMs: NOW_MS + 5 });
      await store.recordToolStarted({
        ...started,
        idempotencyKey: `${runId}:0:1`,
        step: 0,
        callIndex: 1,
        startedAtMs: NOW_MS,
      });
      let ledger = await store.ledger(runId);
      expect(ledger.map((entry) => [entry.idempotencyKey, entry.status])).toEqual([
        [`${runId}:0:1`, 'started'],
        [`${runId}:1:0`, 'started'],
      ]);
      expect(ledger[1]?.startedAtMs).toBe(NOW_MS);
      await store.recordToolCompleted(
        runId,
        `${runId}:1:0`,
        { status: 'success', content: 'sent' },
        NOW_MS + 10,
      );
      await store.recordToolCompleted(
        runId,
        `${runId}:1:0`,
        { status: 'success', content: 'again' },
        NOW_MS + 20,
      );
      ledger = await store.ledger(runId);
      expect(ledger[1]).toMatchObject({
        status: 'completed',
        result: { status: 'success', content: 'sent' },
        completedAtMs: NOW_MS + 10,
      });
      expect(await store.ledger(`${runId}-other`)).toEqual([]);
    });

    it('refuses to complete a call that never started', async () => {
      const runId = newRunId();
      await createRun(runId);
      expect(await codeOf(store.recordToolCompleted(runId, 'nope', null, NOW_MS))).toBe('store.not_found');
    });

    it('lists runs newest first, filtered by status', async () => {
      const first = newRunId();
      const second = newRunId();
      await createRun(first, NOW_MS + 1);
      await createRun(second, NOW_MS + 2);
      await store.acquireLease(second, 'owner-a', 10_000, NOW_MS);
      await store.saveCheckpoint(second, {
        owner: 'owner-a',
        expectedVersion: 1,
        status: 'completed',
        schemaVersion: 1,
        state: {},
      });
      const all = await store.listRuns();
      const ids = all.map((run) => run.runId).filter((id) => id === first || id === second);
      expect(ids).toEqual([second, first]);
      expect(all.find((run) => run.runId === first)).not.toHaveProperty('state');
      const completed = await store.listRuns({ status: 'completed' });
      expect(completed.map((run) => run.runId)).toContain(second);
      expect(completed.map((run) => run.runId)).not.toContain(first);
      expect((await store.listRuns({ limit: 1 })).length).toBe(1);
    });

    it('cancels a run that is not running at once, and reports unknown runs as store.not_found', async () => {
      const interrupted = newRunId();
      await createRun(interrupted);
      await store.acquireLease(interrupted, 'owner-a', 60_000, NOW_MS);
      await store.saveCheckpoint(interrupted, {
        owner: 'owner-a',
        expectedVersion: 1,
        status: 'interrupted',
        schemaVersion: 1,
        state: { step: 1 },
      });
      await store.releaseLease(interrupted, 'owner-a');
      expect(await store.requestCancellation(interrupted, 'no longer needed', NOW_MS + 1)).toBe('cancelled');
      const loaded = await store.loadRun(interrupted);
      expect(loaded).toMatchObject({
        status: 'cancelled',
        version: 3,
        cancellation: { reason: 'no longer needed', requestedAtMs: NOW_MS + 1 },
      });
      expect(loaded?.state).toEqual({ step: 1 });
      const listed = (await store.listRuns({ status: 'cancelled' })).find((run) => run.runId === interrupted);
      expect(listed?.cancellation).toEqual({ reason: 'no longer needed', requestedAtMs: NOW_MS + 1 });
      expect(await codeOf(store.requestCancellation(`${interrupted}-missing`, 'x', NOW_MS))).toBe(
        'store.not_found',
      );
    });

    it('cancels a running run whose lease is gone or expired at once', async () => {
      const unleased = newRunId();
      await createRun(unleased);
      expect(await store.requestCancellation(unleased, 'stop', NOW_MS)).toBe('cancelled');
      const expired = newRunId();
      await createRun(expired);
      await store.acquireLease(expired, 'owner-a', 1_000, NOW_MS);
      expect(await store.requestCancellation(expired, 'stop', NOW_MS + 1_000)).toBe('cancelled');
      expect((await store.loadRun(expired))?.status).toBe('cancelled');
    });

    it("records a cancellation for a running run and makes its owner's next checkpoint conflict", async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      expect(await store.requestCancellation(runId, 'user pressed stop', NOW_MS + 5)).toBe('running');
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({
        status: 'running',
        version: 2,
        cancellation: { reason: 'user pressed stop', requestedAtMs: NOW_MS + 5 },
      });
      const checkpoint = {
        owner: 'owner-a',
        status: 'running' as const,
        schemaVersion: 1,
        state: { step: 1 },
      };
      expect(await codeOf(store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 1 }))).toBe(
        'store.conflict',
      );
      // The owner, having reloaded, ends the run.
      expect(
        await store.saveCheckpoint(runId, { ...checkpoint, status: 'cancelled', expectedVersion: 2 }),
      ).toBe(3);
      expect((await store.loadRun(runId))?.status).toBe('cancelled');
    });

    it('leaves a run that has ended as it is when asked to cancel it', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      await store.saveCheckpoint(runId, {
        owner: 'owner-a',
        expectedVersion: 1,
        status: 'completed',
        schemaVersion: 1,
        state: { done: true },
      });
      expect(await store.requestCancellation(runId, 'too late', NOW_MS)).toBe('completed');
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({ status: 'completed', version: 2 });
      expect(loaded?.cancellation).toBeUndefined();
    });

    it('returns copies: mutating a loaded state changes nothing stored', async () => {
      const runId = newRunId();
      await createRun(runId);
      const loaded = await store.loadRun(runId);
      (loaded!.state as { step: number }).step = 42;
      expect(((await store.loadRun(runId))!.state as { step: number }).step).toBe(0);
    });
  });
  durableCrashScenarios(name, createStore);
  durableRunScenarios(name, createStore);
}
