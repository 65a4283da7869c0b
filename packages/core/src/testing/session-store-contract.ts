import type { RunStatus, RunStore } from '../spec/run-store.js';
import { checkpointBy, codeOf, errorOf, NOW_MS, runIds } from './contract-support.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

/**
 * The session part of the RunStore contract: a run claims its session with its creation, one run at a time, at the
 * version its conversation was loaded at; a completed run's turns are appended once, atomically. Run by
 * `runStoreContract`.
 */
export function sessionStoreContract(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`RunStore contract: ${name}: sessions`, () => {
    let store: RunStore;
    const newId = runIds('session');

    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Creates a run on the session at `expectedVersion`. */
    const createOn = (sessionId: string, runId: string, expectedVersion: number, createdAtMs = NOW_MS) =>
      store.createRun({
        runId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0 },
        createdAtMs,
        session: { sessionId, expectedVersion },
      });

    /** Moves a run to `status` (taking its lease as `owner`). */
    const end = async (runId: string, status: RunStatus, owner = 'owner-a') => {
      await store.acquireLease(runId, owner, 60_000, NOW_MS);
      await store.saveCheckpoint(runId, checkpointBy(owner, { expectedVersion: 1, status }));
    };

    const turn = (text: string) => [
      { role: 'user', content: text },
      { role: 'assistant', content: `noted: ${text} ✓` },
    ];

    it('creates a session with its first run, which holds it until its turns are appended', async () => {
      const sessionId = newId();
      const runId = newId();
      expect(await store.loadSession(sessionId)).toBeUndefined();
      const created = await createOn(sessionId, runId, 0);
      expect(created).not.toHaveProperty('session');
      expect((await store.loadRun(runId))?.version).toBe(1);
      expect(await store.loadSession(sessionId)).toEqual({
        sessionId,
        agentName: 'contract',
        version: 0,
        messageCount: 0,
        activeRunId: runId,
        createdAtMs: NOW_MS,
        updatedAtMs: NOW_MS,
        turns: [],
      });
      await end(runId, 'completed');
      const version = await store.appendSessionTurn(sessionId, {
        runId,
        expectedVersion: 0,
        messages: turn('héllo'),
        nowMs: NOW_MS + 5,
      });
      expect(version).toBe(1);
      const loaded = await store.loadSession(sessionId);
      expect(loaded).toEqual({
        sessionId,
        agentName: 'contract',
        version: 1,
        messageCount: 2,
        createdAtMs: NOW_MS,
        updatedAtMs: NOW_MS + 5,
        turns: [{ runId, messages: turn('héllo'), appendedAtMs: NOW_MS + 5 }],
      });
    });

    it('appends a run only once, in order, and returns copies', async () => {
      const sessionId = newId();
      const runs = [newId(), newId(), newId()];
      for (const [index, runId] of runs.entries()) {
        await createOn(sessionId, runId, index, NOW_MS + index);
        await end(runId, 'completed');
        const append = {
          runId,
          expectedVersion: index,
          messages: turn(`turn ${index}`),
          nowMs: NOW_MS + index,
        };
        expect(await store.appendSessionTurn(sessionId, append)).toBe(index + 1);
        // An append whose answer was lost is made again: nothing changes.
        expect(await store.appendSessionTurn(sessionId, append)).toBe(index + 1);
      }
      const loaded = await store.loadSession(sessionId);
      expect(loaded?.version).toBe(3);
      expect(loaded?.messageCount).toBe(6);
      expect(loaded?.turns.map((entry) => entry.runId)).toEqual(runs);
      expect(loaded?.turns.map((entry) => (entry.messages[0] as { content: string }).content)).toEqual([
        'turn 0',
        'turn 1',
        'turn 2',
      ]);
      (loaded!.turns[0]!.messages[0] as { content: string }).content = 'changed';
      expect((await store.loadSession(sessionId))?.turns[0]?.messages[0]).toEqual({
        role: 'user',
        content: 'turn 0',
      });
    });

    it('refuses a second run while the first runs, is interrupted, or completed without appending', async () => {
      const sessionId = newId();
      const holder = newId();
      await createOn(sessionId, holder, 0);
      await store.acquireLease(holder, 'owner-a', 60_000, NOW_MS);
      const running = await errorOf(createOn(sessionId, newId(), 0));
      expect(running).toMatchObject({
        code: 'store.conflict',
        data: {
          sessionId,
          activeRunId: holder,
          activeRunStatus: 'running',
          activeRunLeaseExpiresAtMs: NOW_MS + 60_000,
        },
      });
      for (const status of ['interrupted', 'completed'] as const) {
        const other = newId();
        const version = (await store.loadRun(holder))!.version;
        await store.saveCheckpoint(holder, checkpointBy('owner-a', { expectedVersion: version, status }));
        expect(await errorOf(createOn(sessionId, other, 0))).toMatchObject({
          code: 'store.conflict',
          data: { sessionId, activeRunId: holder, activeRunStatus: status },
        });
        // The refused run was not created.
        expect(await store.loadRun(other)).toBeUndefined();
      }
      expect((await store.loadSession(sessionId))?.activeRunId).toBe(holder);
    });

    it('lets a run claim a session whose holder failed or was cancelled, or let go of it', async () => {
      const sessionId = newId();
      const failed = newId();
      await createOn(sessionId, failed, 0);
      await end(failed, 'failed');
      const cancelled = newId();
      await createOn(sessionId, cancelled, 0);
      expect((await store.loadSession(sessionId))?.activeRunId).toBe(cancelled);
      expect(await store.requestCancellation(cancelled, 'stop', NOW_MS)).toBe('cancelled');
      const released = newId();
      await createOn(sessionId, released, 0);
      await store.acquireLease(released, 'owner-a', 60_000, NOW_MS);
      // Only the holder lets go.
      await store.releaseSession(sessionId, cancelled, NOW_MS + 1);
      expect((await store.loadSession(sessionId))?.activeRunId).toBe(released);
      await store.releaseSession(sessionId, released, NOW_MS + 2);
      const session = await store.loadSession(sessionId);
      expect(session).toMatchObject({ version: 0, turns: [], updatedAtMs: NOW_MS + 2 });
      expect(session).not.toHaveProperty('activeRunId');
      await createOn(sessionId, newId(), 0);
    });

    it('refuses a claim or an append at a version the session has moved past, creating nothing', async () => {
      const sessionId = newId();
      const first = newId();
      await createOn(sessionId, first, 0);
      await end(first, 'completed');
      await store.appendSessionTurn(sessionId, {
        runId: first,
        expectedVersion: 0,
        messages: turn('one'),
        nowMs: NOW_MS,
      });
      const stale = newId();
      expect(await errorOf(createOn(sessionId, stale, 0))).toMatchObject({
        code: 'store.conflict',
        data: { sessionId, expectedVersion: 0, actualVersion: 1 },
      });
      expect(await store.loadRun(stale)).toBeUndefined();
      expect(await codeOf(createOn(newId(), newId(), 3))).toBe('store.conflict');
      const second = newId();
      await createOn(sessionId, second, 1);
      expect(
        await errorOf(
          store.appendSessionTurn(sessionId, {
            runId: second,
            expectedVersion: 0,
            messages: [],
            nowMs: NOW_MS,
          }),
        ),
      ).toMatchObject({ code: 'store.conflict', data: { sessionId, expectedVersion: 0, actualVersion: 1 } });
      const notHolder = await errorOf(
        store.appendSessionTurn(sessionId, { runId: stale, expectedVersion: 1, messages: [], nowMs: NOW_MS }),
      );
      expect(notHolder).toMatchObject({ code: 'store.conflict', data: { sessionId, activeRunId: second } });
      expect(
        await codeOf(
          store.appendSessionTurn(`${sessionId}-missing`, {
            runId: second,
            expectedVersion: 0,
            messages: [],
            nowMs: NOW_MS,
          }),
        ),
      ).toBe('store.not_found');
      expect((await store.loadSession(sessionId))?.version).toBe(1);
    });

    it('gives exactly one of two runs claiming a session at once', async () => {
      const sessionId = newId();
      const claims = await Promise.allSettled([
        createOn(sessionId, newId(), 0),
        createOn(sessionId, newId(), 0),
      ]);
      expect(claims.map((claim) => claim.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = claims.find((claim) => claim.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toMatchObject({ code: 'store.conflict', data: { sessionId } });
    });

    it('keeps a duplicate run id from claiming a session', async () => {
      const sessionId = newId();
      const runId = newId();
      await createOn(sessionId, runId, 0);
      await end(runId, 'failed');
      expect(await codeOf(createOn(sessionId, runId, 0))).toBe('store.conflict');
    });

    it('lists sessions most recently updated first, and deletes them with their turns', async () => {
      const older = newId();
      const newer = newId();
      const olderRun = newId();
      await createOn(older, olderRun, 0, NOW_MS + 100);
      await createOn(newer, newId(), 0, NOW_MS + 200);
      await end(olderRun, 'completed');
      await store.appendSessionTurn(older, {
        runId: olderRun,
        expectedVersion: 0,
        messages: turn('x'),
        nowMs: NOW_MS + 300,
      });
      const listed = (await store.listSessions()).filter((entry) => [older, newer].includes(entry.sessionId));
      expect(listed.map((entry) => entry.sessionId)).toEqual([older, newer]);
      expect(listed[0]).toEqual({
        sessionId: older,
        agentName: 'contract',
        version: 1,
        messageCount: 2,
        createdAtMs: NOW_MS + 100,
        updatedAtMs: NOW_MS + 300,
      });
      expect(listed[1]).toMatchObject({ version: 0, activeRunId: expect.any(String) });
      expect(await store.listSessions({ limit: 1 })).toHaveLength(1);
      expect(await store.deleteSession(older)).toBe(true);
      expect(await store.deleteSession(older)).toBe(false);
      expect(await store.loadSession(older)).toBeUndefined();
      expect((await store.loadRun(olderRun))?.status).toBe('completed');
      // A new session of the same id starts from nothing.
      await createOn(older, newId(), 0);
      expect((await store.loadSession(older))?.turns).toEqual([]);
    });
  });
}
