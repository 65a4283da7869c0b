import type { RunStore } from '../spec/run-store.js';
import { codeOf, createContractRun, NOW_MS, runIds } from './contract-support.js';
import { durableCrashScenarios } from './durable-crash-scenarios.js';
import { durableLogScenarios } from './durable-log-scenarios.js';
import { durableRunScenarios } from './durable-run-scenarios.js';
import { runStoreFleetContract } from './run-store-fleet-contract.js';
import { runStoreLeaseContract } from './run-store-lease-contract.js';
import { runStoreLogContract } from './run-store-log-contract.js';
import { sessionRunScenarios } from './session-run-scenarios.js';
import { sessionStoreContract } from './session-store-contract.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

/**
 * The behaviour every RunStore must have, down to durable runs of an agent on it (crashes at every write, approvals,
 * an outage, cancellation from another process, leases) and runs on sessions. Call it from a test file with a factory
 * that returns a fresh store. `persistent` (defaults to false): a store the factory makes again holds what the
 * previous one stored (a file, a database), so that the session scenarios restart the store between runs.
 *
 * @example
 *   runStoreContract('SqliteRunStore', () => new SqliteRunStore(':memory:'));
 *   runStoreContract('SqliteRunStore (file)', () => new SqliteRunStore('test.db'), { persistent: true });
 */
export function runStoreContract(
  name: string,
  createStore: () => RunStore | Promise<RunStore>,
  options: { persistent?: boolean } = {},
): void {
  describe(`RunStore contract: ${name}`, () => {
    let store: RunStore;
    const newRunId = runIds('run');
    const createRun = (runId: string, createdAtMs = NOW_MS) => createContractRun(store, runId, createdAtMs);

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
        createdAtMs: NOW_MS,
        updatedAtMs: NOW_MS,
      });
      expect(created).toMatchObject({ version: 1, createdAtMs: NOW_MS, updatedAtMs: NOW_MS });
      expect(loaded?.state).toEqual({ step: 0, messages: [{ role: 'user', content: 'héllo ✓' }] });
      expect(await store.loadRun(`${runId}-missing`)).toBeUndefined();
    });

    it('rejects a duplicate run id with store.conflict', async () => {
      const runId = newRunId();
      await createRun(runId);
      expect(await codeOf(createRun(runId))).toBe('store.conflict');
    });

    it("saves checkpoints with optimistic versions, stamped with the writer's clock", async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      const checkpoint = {
        owner: 'owner-a',
        status: 'running' as const,
        schemaVersion: 1,
        nowMs: NOW_MS + 7,
      };
      expect(
        await store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 1, state: { step: 1 } }),
      ).toBe(2);
      expect(
        await store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 2, state: { step: 2 } }),
      ).toBe(3);
      const stale = store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 2, state: { step: 99 } });
      expect(await codeOf(stale)).toBe('store.conflict');
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({ version: 3, createdAtMs: NOW_MS, updatedAtMs: NOW_MS + 7 });
      expect(loaded?.state).toEqual({ step: 2 });
      // A clock far from the machine's (a test's, or a skewed host's) is what the record says, as given.
      await store.saveCheckpoint(runId, { ...checkpoint, expectedVersion: 3, state: {}, nowMs: 42 });
      expect((await store.loadRun(runId))?.updatedAtMs).toBe(42);
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
        nowMs: NOW_MS + 3,
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
        nowMs: NOW_MS,
      });
      await store.releaseLease(interrupted, 'owner-a');
      expect(await store.requestCancellation(interrupted, 'no longer needed', NOW_MS + 1)).toBe('cancelled');
      const loaded = await store.loadRun(interrupted);
      expect(loaded).toMatchObject({
        status: 'cancelled',
        version: 3,
        updatedAtMs: NOW_MS + 1,
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
        updatedAtMs: NOW_MS + 5,
        cancellation: { reason: 'user pressed stop', requestedAtMs: NOW_MS + 5 },
      });
      const checkpoint = {
        owner: 'owner-a',
        status: 'running' as const,
        schemaVersion: 1,
        state: { step: 1 },
        nowMs: NOW_MS + 6,
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
        nowMs: NOW_MS,
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
  runStoreLeaseContract(name, createStore);
  runStoreLogContract(name, createStore);
  runStoreFleetContract(name, createStore);
  sessionStoreContract(name, createStore);
  durableCrashScenarios(name, createStore);
  durableLogScenarios(name, createStore);
  durableRunScenarios(name, createStore);
  sessionRunScenarios(name, createStore, options.persistent ?? false);
}
