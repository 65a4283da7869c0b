import type { RunStore } from '../spec/run-store.js';
import { DurableFixture, FIXTURE_START_MS } from './durable-fixture.js';
import { FakeClock } from './fake-clock.js';
import { FaultyRunStore } from './faulty-run-store.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

const LATER_MS = FIXTURE_START_MS + 60_000;

/**
 * Durable runs on a store, end to end: approvals, a store outage, cancellation from another process, the resume of
 * an ended run. Part of the RunStore contract (with `durableCrashScenarios`).
 */
export function durableRunScenarios(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`durable runs on ${name}`, () => {
    let store: RunStore;
    let counter = 0;
    const newRunId = () => `durable-${process.pid}-${Date.now().toString(36)}-${counter++}`;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('interrupts before a call that needs approval; an approval runs it once, a rejection tells the model why', async () => {
      const fixture = new DurableFixture();
      fixture.script = [
        {
          toolCalls: [
            { name: 'lookup', arguments: { city: 'Oslo' } },
            { name: 'send_mail', arguments: { to: 'ana@elsewhere.org' } },
          ],
        },
        { toolCalls: [{ name: 'send_mail', arguments: { to: 'bob@example.com' } }] },
        { content: 'done' },
      ];
      for (const answer of [
        { approved: true as const },
        { approved: false as const, reason: 'not to customers' },
      ]) {
        const runId = newRunId();
        const assistant = fixture.agent(store, { owner: 'owner' });
        const interrupted = await assistant.run('Mail Ana', { runId });
        expect(interrupted).toMatchObject({
          status: 'interrupted',
          stopReason: 'approval_required',
          resumable: true,
        });
        expect(interrupted.pending).toEqual([
          {
            kind: 'approval',
            idempotencyKey: `${runId}:1:1`,
            toolName: 'send_mail',
            arguments: { to: 'ana@elsewhere.org' },
            step: 1,
            callIndex: 1,
          },
        ]);
        expect((await store.loadRun(runId))?.status).toBe('interrupted');
        expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(0);
        const later = fixture.agent(store, { owner: 'reviewer', clock: new FakeClock(LATER_MS) });
        const done = await later.resume(runId, { approvals: { [`${runId}:1:1`]: answer } });
        expect(done).toMatchObject({ status: 'completed', output: 'done' });
        expect(fixture.executionsOf(`${runId}:1:0`)).toHaveLength(1);
        expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(answer.approved ? 1 : 0);
        expect(fixture.executionsOf(`${runId}:2:0`)).toHaveLength(1);
        const mail = done.messages.find(
          (message) => message.role === 'tool' && message.toolName === 'send_mail',
        );
        if (!answer.approved) {
          expect(JSON.parse(mail!.content)).toMatchObject({
            status: 'error',
            error: { code: 'tool.rejected' },
          });
          expect(mail!.content).toContain('not to customers');
        } else {
          expect(JSON.parse(mail!.content)).toEqual({
            status: 'success',
            content: 'sent to ana@elsewhere.org',
          });
        }
      }
    });

    it('pauses on a store outage after bounded retries, and resumes once the store is back without losing a step', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const clock = new FakeClock(FIXTURE_START_MS);
      const gate = fixture.gate(`${runId}:2:0`);
      const assistant = fixture.agent(faulty, {
        owner: 'worker',
        clock,
        durability: { storeMaxAttempts: 3 },
      });
      const running = assistant.run('Pay twice', { runId });
      await gate.entered;
      faulty.down = true;
      gate.release();
      // The retries back off on the clock (100 ms, then 200 ms); while the store is down nothing waits on it.
      await clock.advance(400);
      const paused = await running;
      expect(paused).toMatchObject({
        status: 'interrupted',
        stopReason: 'store_unavailable',
        resumable: true,
      });
      expect(paused.report.retries.store).toBe(2);
      // The call's completion, carried by the step's end: one commit, or the ledger write first.
      const write = store.commitStep === undefined ? 'recordToolCompleted' : 'commitStep';
      expect(faulty.refused.slice(0, 3)).toEqual([write, write, write]);
      // Everything before the outage is in the store.
      const stored = await store.loadRun(runId);
      expect(stored?.status).toBe('running');
      expect((await store.ledger(runId)).map((entry) => entry.status)).toEqual([
        'completed',
        'completed',
        'started',
      ]);
      const refused = assistant.resume(runId).catch((error: unknown) => error);
      await clock.advance(400);
      expect(await refused).toMatchObject({ code: 'store.unavailable' });

      faulty.down = false;
      const interrupted = await assistant.resume(runId);
      expect(interrupted.pending?.map((pending) => pending.idempotencyKey)).toEqual([`${runId}:2:0`]);
      const done = await assistant.resume(runId, { decisions: { [`${runId}:2:0`]: 'execute' } });
      expect(done).toMatchObject({ status: 'completed', output: 'done' });
      expect(fixture.executionsOf(`${runId}:1:0`)).toHaveLength(1);
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(1);
      expect(fixture.executionsOf(`${runId}:2:0`)).toHaveLength(1);
      expect(fixture.requestsByStep).toEqual([1, 1, 1]);
    });

    it('rides out a store outage shorter than its retries', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const clock = new FakeClock(FIXTURE_START_MS);
      const gate = fixture.gate(`${runId}:1:0`);
      const assistant = fixture.agent(faulty, {
        owner: 'worker',
        clock,
        durability: { storeMaxAttempts: 3 },
      });
      const running = assistant.run('Pay twice', { runId });
      await gate.entered;
      faulty.down = true;
      gate.release();
      await clock.advance(150);
      faulty.down = false;
      await clock.advance(150);
      const done = await running;
      expect(done).toMatchObject({ status: 'completed', output: 'done' });
      expect(done.report.retries.store).toBe(2);
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(1);
    });

    it('ends a running run as cancelled at its next checkpoint when another process asks', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const gate = fixture.gate(`${runId}:1:1`);
      const running = fixture.agent(store, { owner: 'worker' }).run('Pay twice', { runId });
      await gate.entered;
      expect(await store.requestCancellation(runId, 'user pressed stop', FIXTURE_START_MS)).toBe('running');
      gate.release();
      const cancelled = await running;
      expect(cancelled).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', resumable: false });
      expect(cancelled.error?.code).toBe('run.cancelled');
      expect(cancelled.error?.message).toContain('user pressed stop');
      expect((await store.loadRun(runId))?.status).toBe('cancelled');
      expect(fixture.executionsOf(`${runId}:2:0`)).toHaveLength(0);
      expect(fixture.requestsByStep).toEqual([1]);
    });

    it('cancels an interrupted run from another process; resume then reports it without calling anything', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      fixture.script = [{ toolCalls: [{ name: 'send_mail', arguments: { to: 'ana@elsewhere.org' } }] }];
      const assistant = fixture.agent(store, { owner: 'worker' });
      expect((await assistant.run('Mail Ana', { runId })).status).toBe('interrupted');
      expect(await store.requestCancellation(runId, 'not needed', FIXTURE_START_MS)).toBe('cancelled');
      const result = await assistant.resume(runId);
      expect(result).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', resumable: false });
      expect(result.error?.message).toContain('not needed');
      await expect(
        assistant.resume(runId, { approvals: { [`${runId}:1:0`]: { approved: true } } }),
      ).rejects.toMatchObject({ code: 'config.invalid' });
      expect(fixture.requestsByStep).toEqual([1]);
      expect(fixture.executions).toEqual([]);
    });

    it('resolves the resume of a completed run with its stored result, calling nothing', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const first = await fixture.agent(store, { owner: 'first' }).run('Pay twice', { runId });
      const again = await fixture.agent(store, { owner: 'second' }).resume(runId);
      expect(again).toMatchObject({
        runId,
        status: 'completed',
        stopReason: 'final_answer',
        output: 'done',
        resumable: false,
      });
      expect(again.messages).toEqual(first.messages);
      expect(again.report).toEqual(first.report);
      expect(fixture.requestsByStep).toEqual([1, 1, 1]);
      expect(fixture.executions).toHaveLength(3);
    });
  });
}
