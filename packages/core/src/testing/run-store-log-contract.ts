import type { JsonValue } from '../errors/keel-error.js';
import type { CheckpointWrite, RunStore } from '../spec/run-store.js';
import { codeOf, createContractRun, NOW_MS, runIds } from './contract-support.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

const message = (content: string): JsonValue => ({ role: 'user', content });

/**
 * The message log of a store that keeps one (`RunStore.messageLog`): appends, rewrites, runs whose messages are
 * inline (created by `createRun`, or written before the log), and log writes with a step's ledger. Part of the
 * RunStore contract; a store without a log skips it.
 */
export function runStoreLogContract(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`RunStore contract: ${name}: the message log`, () => {
    let store: RunStore;
    const newRunId = runIds('log');
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** A checkpoint by `owner-a` at `expectedVersion` that writes `messages` from `start` (state: `{ step }`). */
    const logWrite = (
      expectedVersion: number,
      start: number,
      contents: string[],
      step = expectedVersion,
    ): CheckpointWrite => ({
      expectedVersion,
      owner: 'owner-a',
      status: 'running',
      schemaVersion: 1,
      state: { step, messages: start + contents.length },
      messages: { start, messages: contents.map(message) },
      nowMs: NOW_MS,
    });

    /** A new run (inline, with one message), leased to `owner-a`. */
    async function leasedRun(): Promise<string> {
      const runId = newRunId();
      await createContractRun(store, runId);
      await store.acquireLease(runId, 'owner-a', 60_000, NOW_MS);
      return runId;
    }

    const contentsOf = async (runId: string) =>
      ((await store.loadRun(runId))!.state as { messages: Array<{ content: string }> }).messages.map(
        (entry) => entry.content,
      );

    it('appends the messages of each checkpoint to the log and loads the conversation whole', async (context) => {
      if (store.messageLog !== true) return context.skip();
      const runId = await leasedRun();
      // The run's messages are inline: the log is empty, so the first log write starts at 0.
      expect((await store.loadRun(runId))?.messageCount).toBeUndefined();
      expect(await store.saveCheckpoint(runId, logWrite(1, 0, ['a', 'b']))).toBe(2);
      expect(await store.saveCheckpoint(runId, logWrite(2, 2, ['c']))).toBe(3);
      expect(await store.saveCheckpoint(runId, logWrite(3, 3, []))).toBe(4);
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({ version: 4, messageCount: 3 });
      // The messages take the place of their count, the state's other fields as written.
      expect(loaded?.state).toEqual({ step: 3, messages: [message('a'), message('b'), message('c')] });
      expect(Object.keys(loaded?.state as object)).toEqual(['step', 'messages']);
      // With the ledger and the lease, in one commit.
      if (store.commitStep !== undefined) {
        const key = `${runId}:4:0`;
        await store.recordToolStarted({
          runId,
          idempotencyKey: key,
          step: 4,
          callIndex: 0,
          toolName: 'lookup',
          startedAtMs: NOW_MS,
        });
        const commit = {
          checkpoint: logWrite(4, 3, ['d', 'é ✓']),
          toolsCompleted: [{ idempotencyKey: key, result: { ok: true }, completedAtMs: NOW_MS }],
          leaseTtlMs: 1_000,
        };
        expect(await store.commitStep(runId, commit)).toBe(5);
        expect(await contentsOf(runId)).toEqual(['a', 'b', 'c', 'd', 'é ✓']);
        // A refused commit writes no message either.
        const stale = store.commitStep(runId, { checkpoint: logWrite(4, 5, ['lost']) });
        expect(await codeOf(stale)).toBe('store.conflict');
        expect(await contentsOf(runId)).toEqual(['a', 'b', 'c', 'd', 'é ✓']);
      }
      // A loaded conversation is a copy.
      const copy = (await store.loadRun(runId))?.state as { messages: Array<{ content: string }> };
      copy.messages[0]!.content = 'changed';
      expect((await contentsOf(runId))[0]).toBe('a');
      // Listings carry no messages.
      const [summary] = (await store.listRuns({ limit: 100 })).filter((row) => row.runId === runId);
      expect(summary).toBeDefined();
      expect(summary).not.toHaveProperty('state');
      expect(summary).not.toHaveProperty('messageCount');
    });

    it('starts the log with the messages a new run is created with', async (context) => {
      if (store.messageLog !== true) return context.skip();
      const runId = newRunId();
      const created = await store.createRun({
        runId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0, messages: 2 },
        messages: { start: 0, messages: [message('a'), message('b')] },
        createdAtMs: NOW_MS,
        lease: { owner: 'owner-a', expiresAtMs: NOW_MS + 60_000 },
      });
      expect(created).toMatchObject({ version: 1, messageCount: 2 });
      expect(created.state).toEqual({ step: 0, messages: [message('a'), message('b')] });
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({ version: 1, messageCount: 2 });
      expect(loaded?.state).toEqual({ step: 0, messages: [message('a'), message('b')] });
      // The first checkpoint appends after them.
      expect(await store.saveCheckpoint(runId, logWrite(1, 2, ['c']))).toBe(2);
      expect(await contentsOf(runId)).toEqual(['a', 'b', 'c']);
      // A new run's log starts at 0: anything else is refused, and nothing is stored.
      const gapId = newRunId();
      const gap = store.createRun({
        runId: gapId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0, messages: 2 },
        messages: { start: 1, messages: [message('b')] },
        createdAtMs: NOW_MS,
      });
      expect(await codeOf(gap)).toBe('store.invalid');
      expect(await store.loadRun(gapId)).toBeUndefined();
      // A taken id stores no message either.
      const again = store.createRun({
        runId,
        agentName: 'contract',
        status: 'running',
        schemaVersion: 1,
        state: { step: 0, messages: 1 },
        messages: { start: 0, messages: [message('other')] },
        createdAtMs: NOW_MS,
      });
      expect(await codeOf(again)).toBe('store.conflict');
      expect(await contentsOf(runId)).toEqual(['a', 'b', 'c']);
    });

    it('keeps the event journal as a log: appends, drops from the front, and inline again', async (context) => {
      if (store.journalLog !== true) return context.skip();
      const runId = await leasedRun();
      const entry = (position: number): JsonValue => ({
        type: 'model-call-end',
        atMs: position,
        step: position,
      });
      const write = (
        expectedVersion: number,
        start: number,
        end: number,
        dropped: number,
      ): CheckpointWrite => ({
        expectedVersion,
        owner: 'owner-a',
        status: 'running',
        schemaVersion: 1,
        state: { step: expectedVersion, journal: { entries: end - dropped, dropped } },
        journal: {
          start,
          dropped,
          entries: Array.from({ length: end - start }, (_, index) => entry(start + index)),
        },
        nowMs: NOW_MS,
      });
      const journalOf = async () => {
        const loaded = await store.loadRun(runId);
        const journal = (loaded!.state as { journal: { entries: Array<{ atMs: number }>; dropped: number } })
          .journal;
        return {
          end: loaded?.journalEnd,
          dropped: journal.dropped,
          positions: journal.entries.map((e) => e.atMs),
        };
      };
      expect((await store.loadRun(runId))?.journalEnd).toBeUndefined();
      await store.saveCheckpoint(runId, write(1, 0, 3, 0));
      expect(await journalOf()).toEqual({ end: 3, dropped: 0, positions: [0, 1, 2] });
      await store.saveCheckpoint(runId, write(2, 3, 4, 0));
      expect(await journalOf()).toEqual({ end: 4, dropped: 0, positions: [0, 1, 2, 3] });
      // A write that starts before the log's end rewrites it from there: the entries past the write's end are gone.
      await store.saveCheckpoint(runId, write(3, 2, 3, 0));
      expect(await journalOf()).toEqual({ end: 3, dropped: 0, positions: [0, 1, 2] });
      await store.saveCheckpoint(runId, write(4, 3, 4, 0));
      expect(await journalOf()).toEqual({ end: 4, dropped: 0, positions: [0, 1, 2, 3] });
      // Past its limit the journal drops its oldest entries: the log drops them too.
      await store.saveCheckpoint(runId, write(5, 4, 6, 2));
      expect(await journalOf()).toEqual({ end: 6, dropped: 2, positions: [2, 3, 4, 5] });
      // Entries added and dropped between two writes leave a gap the log never reads.
      await store.saveCheckpoint(runId, write(6, 8, 10, 8));
      expect(await journalOf()).toEqual({ end: 10, dropped: 8, positions: [8, 9] });
      // The state's other fields as written, the journal's keys in their order.
      const loaded = await store.loadRun(runId);
      expect(Object.keys((loaded!.state as { journal: object }).journal)).toEqual(['entries', 'dropped']);
      // A refused write changes nothing.
      expect(await codeOf(store.saveCheckpoint(runId, write(6, 10, 12, 8)))).toBe('store.conflict');
      expect(await journalOf()).toEqual({ end: 10, dropped: 8, positions: [8, 9] });
      // A checkpoint with its journal inline drops the log.
      const inline: CheckpointWrite = {
        ...write(7, 0, 0, 0),
        state: { step: 7, journal: { entries: [entry(0)], dropped: 0 } },
      };
      delete inline.journal;
      await store.saveCheckpoint(runId, inline);
      expect(await journalOf()).toEqual({ end: undefined, dropped: 0, positions: [0] });
      // Listings carry no journal.
      const [summary] = (await store.listRuns({ limit: 100 })).filter((row) => row.runId === runId);
      expect(summary).not.toHaveProperty('journalEnd');
    });

    it('refuses a log write past the end of the log with store.invalid, writing nothing', async (context) => {
      if (store.messageLog !== true) return context.skip();
      const runId = await leasedRun();
      expect(await codeOf(store.saveCheckpoint(runId, logWrite(1, 1, ['gap'])))).toBe('store.invalid');
      await store.saveCheckpoint(runId, logWrite(1, 0, ['a']));
      expect(await codeOf(store.saveCheckpoint(runId, logWrite(2, 3, ['gap'])))).toBe('store.invalid');
      const loaded = await store.loadRun(runId);
      expect(loaded).toMatchObject({ version: 2, messageCount: 1 });
      expect(loaded?.state).toEqual({ step: 1, messages: [message('a')] });
    });

    it('rewrites the log from the first message that changed, and drops it for a state with messages inline', async (context) => {
      if (store.messageLog !== true) return context.skip();
      const runId = await leasedRun();
      await store.saveCheckpoint(runId, logWrite(1, 0, ['system', 'a', 'b', 'c', 'd']));
      // A conversation manager kept the first message and summarised the rest: shorter than before.
      await store.saveCheckpoint(runId, logWrite(2, 1, ['summary']));
      expect(await contentsOf(runId)).toEqual(['system', 'summary']);
      expect((await store.loadRun(runId))?.messageCount).toBe(2);
      await store.saveCheckpoint(runId, logWrite(3, 2, ['e', 'f', 'g']));
      expect(await contentsOf(runId)).toEqual(['system', 'summary', 'e', 'f', 'g']);
      // The first message replaced: everything again.
      await store.saveCheckpoint(runId, logWrite(4, 0, ['new system', 'summary']));
      expect(await contentsOf(runId)).toEqual(['new system', 'summary']);
      // A writer without the log (an older keel, a tool that edits the state) writes the messages inline.
      await store.saveCheckpoint(runId, {
        ...logWrite(5, 0, []),
        state: { step: 5, messages: [message('inline')] },
        messages: undefined,
      });
      const inline = await store.loadRun(runId);
      expect(inline?.messageCount).toBeUndefined();
      expect(inline?.state).toEqual({ step: 5, messages: [message('inline')] });
      // ... and the next log write starts the log again from 0.
      expect(await codeOf(store.saveCheckpoint(runId, logWrite(6, 1, ['x'])))).toBe('store.invalid');
      await store.saveCheckpoint(runId, logWrite(6, 0, ['x']));
      expect(await contentsOf(runId)).toEqual(['x']);
    });
  });
}
