import type { RunStore } from '../spec/run-store.js';
import { checkpointBy, codeOf, createContractRun, errorOf, NOW_MS, runIds } from './contract-support.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

/**
 * The lease part of the RunStore contract: one owner at a time, expiry, renewal, release, and checkpoints only from
 * the holder. Run by `runStoreContract`.
 */
export function runStoreLeaseContract(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`RunStore contract: ${name}: leases`, () => {
    let store: RunStore;
    const newRunId = runIds('lease');
    const createRun = (runId: string) => createContractRun(store, runId);

    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('refuses a checkpoint from a process that does not hold the lease, saying who does', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      const intruder = await errorOf(
        store.saveCheckpoint(runId, checkpointBy('owner-b', { expectedVersion: 1 })),
      );
      expect(intruder).toMatchObject({ code: 'store.conflict', data: { runId, holder: 'owner-a' } });
      const stale = await errorOf(
        store.saveCheckpoint(runId, checkpointBy('owner-a', { expectedVersion: 7 })),
      );
      expect(stale).toMatchObject({
        code: 'store.conflict',
        data: { runId, expectedVersion: 7, actualVersion: 1 },
      });
      expect(
        await codeOf(
          store.saveCheckpoint(`${runId}-missing`, checkpointBy('owner-a', { expectedVersion: 1 })),
        ),
      ).toBe('store.not_found');
    });

    it('takes checkpoints from the holder of an expired lease that nobody took since', async () => {
      const runId = newRunId();
      await createRun(runId);
      await store.acquireLease(runId, 'owner-a', 1_000, NOW_MS);
      const late = checkpointBy('owner-a', { expectedVersion: 1, nowMs: NOW_MS + 5_000 });
      expect(await store.saveCheckpoint(runId, late)).toBe(2);
    });

    it('gives the lease to exactly one owner until it expires', async () => {
      const runId = newRunId();
      await createRun(runId);
      const lease = await store.acquireLease(runId, 'owner-a', 10_000, NOW_MS);
      expect(lease).toEqual({ runId, owner: 'owner-a', expiresAtMs: NOW_MS + 10_000 });
      const refused = await errorOf(store.acquireLease(runId, 'owner-b', 10_000, NOW_MS + 5_000));
      expect(refused).toMatchObject({
        code: 'store.conflict',
        retryAfterMs: 5_000,
        data: { runId, holder: 'owner-a', expiresAtMs: NOW_MS + 10_000 },
      });
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
  });
}
