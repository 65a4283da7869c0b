import { IDEMPOTENT_WAIT_MS } from '../agent/durability/durable-writes.js';
import type { RunState, RunTransition } from '../agent/run/run-state.js';
import type { RunStore } from '../spec/run-store.js';
import { withoutCommitStep } from './contract-support.js';
import { DurableFixture, FIXTURE_START_MS } from './durable-fixture.js';
import { FakeClock } from './fake-clock.js';
import { FaultyRunStore } from './faulty-run-store.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

const LATER_MS = FIXTURE_START_MS + 60_000;

/**
 * Durable runs on a store, against crashes: a crash at every store write, processes that die inside a call, and
 * leases between processes. Part of the RunStore contract.
 */
export function durableCrashScenarios(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`durable runs on ${name}: crashes`, () => {
    let store: RunStore;
    let counter = 0;
    const newRunId = () => `durable-${process.pid}-${Date.now().toString(36)}-${counter++}`;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it.each([
      ['its commitStep', 5],
      ['separate calls', 14],
    ])(
      'resumes after a crash between any two store writes (%s), never repeating an effect or a checkpointed response',
      async (variant, leastWrites) => {
        const target = variant === 'separate calls' ? withoutCommitStep(store) : store;
        const clean = new FaultyRunStore(target);
        const reference = new DurableFixture();
        const completed = await reference
          .agent(clean, { owner: 'clean' })
          .run('Pay twice', { runId: newRunId() });
        expect(completed).toMatchObject({ status: 'completed', output: 'done', resumable: false });
        const totalWrites = clean.writes;
        expect(totalWrites).toBeGreaterThan(leastWrites);

        for (let limit = 0; limit < totalWrites; limit++) {
          const runId = newRunId();
          const fixture = new DurableFixture();
          const faulty = new FaultyRunStore(target);
          faulty.writeLimit = limit;
          const transitions: RunTransition[] = [];
          const first = fixture.agent(faulty, {
            owner: 'first',
            onTransition: (transition) => {
              if (faulty.refused.length === 0) transitions.push(transition);
            },
          });
          const crashed = await first.run('Pay twice', { runId });
          if (crashed.status === 'completed') {
            // Only releasing the lease failed: the run is over, and its lease simply expires.
            expect(limit).toBe(totalWrites - 1);
            expect(fixture.executions).toHaveLength(3);
            continue;
          }
          if (limit === 0) {
            expect(crashed).toMatchObject({
              status: 'failed',
              stopReason: 'store_unavailable',
              resumable: false,
            });
            expect(await store.loadRun(runId)).toBeUndefined();
            continue;
          }
          expect(crashed, `crash after ${limit} writes`).toMatchObject({
            status: 'interrupted',
            stopReason: 'store_unavailable',
            resumable: true,
          });
          expect(crashed.error?.code).toBe('store.unavailable');
          // A response the store never got (it was to be written with what followed it) is asked for again.
          const stored = (await store.loadRun(runId))?.state as unknown as RunState;
          const responses = transitions.filter(
            (transition) => transition.kind === 'model-response-received',
          ).length;
          const responseStored =
            stored.step > responses || (stored.step === responses && stored.phase !== 'model');
          const askedAgain = responseStored ? -1 : responses - 1;
          const second = fixture.agent(target, { owner: 'second', clock: new FakeClock(LATER_MS) });
          let resumed = await second.resume(runId);
          if (resumed.status === 'interrupted') {
            expect(resumed.stopReason).toBe('decision_required');
            const decisions: Record<string, 'execute' | 'abandon'> = {};
            for (const pending of resumed.pending ?? []) {
              expect(pending).toMatchObject({ kind: 'uncertain', toolName: 'charge' });
              // The log tells what happened; a real user would check the card.
              decisions[pending.idempotencyKey] =
                fixture.executionsOf(pending.idempotencyKey).length > 0 ? 'abandon' : 'execute';
            }
            resumed = await second.resume(runId, { decisions });
          }
          expect(resumed, `resume after ${limit} writes`).toMatchObject({
            status: 'completed',
            output: 'done',
          });
          for (const key of [`${runId}:1:1`, `${runId}:2:0`]) {
            expect(fixture.executionsOf(key), `${key} after ${limit} writes`).toHaveLength(1);
          }
          const lookups = fixture.executionsOf(`${runId}:1:0`);
          expect(lookups.length).toBeGreaterThanOrEqual(1);
          expect(lookups.length).toBeLessThanOrEqual(2);
          // An idempotent call whose start waited for its end (RunStore.ranCallsInCommit) and whose step's response
          // was asked again runs again as a first attempt; one whose start was saved runs as a second.
          expect(lookups.map((execution) => execution.attempt)).toEqual(
            lookups.length === 1 ? [1] : askedAgain === 0 ? [1, 1] : [1, 2],
          );
          expect(fixture.requestsByStep).toEqual([0, 1, 2].map((step) => (step === askedAgain ? 2 : 1)));
          const record = await store.loadRun(runId);
          expect(record?.status).toBe('completed');
          const ledger = await store.ledger(runId);
          expect(ledger.every((entry) => entry.status === 'completed')).toBe(true);
          expect(ledger.map((entry) => entry.idempotencyKey)).toEqual([
            `${runId}:1:0`,
            `${runId}:1:1`,
            `${runId}:2:0`,
          ]);
        }
      },
    );

    it("keeps a tool's stopRun across a crash at any write: the run ends as the tool asked, nothing after it runs", async () => {
      const script = [
        {
          toolCalls: [
            { name: 'lookup', arguments: { city: 'Lyon' } },
            { name: 'place_order', arguments: { orderId: 'A-7' } },
          ],
        },
        { toolCalls: [{ name: 'charge', arguments: { amountCents: 900 } }] },
        { content: 'done' },
      ];
      const stopped = {
        status: 'completed',
        stopReason: 'stop_requested',
        stopDetail: 'order placed',
        output: { orderId: 'A-7' },
      };
      const clean = new FaultyRunStore(store);
      const reference = new DurableFixture();
      reference.script = script;
      expect(
        await reference.agent(clean, { owner: 'clean' }).run('Order', { runId: newRunId() }),
      ).toMatchObject(stopped);
      const totalWrites = clean.writes;
      for (let limit = 1; limit < totalWrites; limit++) {
        const runId = newRunId();
        const fixture = new DurableFixture();
        fixture.script = script;
        const faulty = new FaultyRunStore(store);
        faulty.writeLimit = limit;
        const crashed = await fixture.agent(faulty, { owner: 'first' }).run('Order', { runId });
        if (crashed.status === 'completed') {
          expect(limit).toBe(totalWrites - 1);
          continue;
        }
        expect(crashed.stopReason, `crash after ${limit} writes`).toBe('store_unavailable');
        const second = fixture.agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) });
        const resumed = await second.resume(runId);
        expect(resumed, `resume after ${limit} writes`).toMatchObject(stopped);
        // The model was never asked for step 2, and its call never ran.
        expect(fixture.requestsByStep, `after ${limit} writes`).toHaveLength(1);
        expect(fixture.requestsByStep[0]).toBeLessThanOrEqual(2);
        expect(fixture.executionsOf(`${runId}:2:0`)).toEqual([]);
        const orders = fixture.executionsOf(`${runId}:1:1`);
        // place_order is idempotent: where its start waits for its end (RunStore.ranCallsInCommit), a second
        // execution is a first attempt again (nothing said the first one started).
        const again = store.ranCallsInCommit === true ? [1, 1] : [1, 2];
        expect(orders.map((execution) => execution.attempt)).toEqual(orders.length === 1 ? [1] : again);
        const record = await store.loadRun(runId);
        expect(record?.status).toBe('completed');
        expect(record?.state).toMatchObject({ stopReason: 'stop_requested', output: { orderId: 'A-7' } });
      }
    });

    it('leaves a decision for a call that was running when its process died; execute runs it once more', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const gate = fixture.gate(`${runId}:1:1`);
      const running = fixture.agent(faulty, { owner: 'first' }).run('Pay twice', { runId });
      await gate.entered;
      faulty.down = true; // the process dies: nothing more reaches the store
      gate.release();
      expect((await running).stopReason).toBe('store_unavailable');

      const second = fixture.agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) });
      const interrupted = await second.resume(runId);
      expect(interrupted).toMatchObject({
        status: 'interrupted',
        stopReason: 'decision_required',
        resumable: true,
      });
      expect(interrupted.error?.code).toBe('run.interrupted');
      expect(interrupted.pending).toEqual([
        {
          kind: 'uncertain',
          idempotencyKey: `${runId}:1:1`,
          toolName: 'charge',
          arguments: { amountCents: 500 },
          step: 1,
          callIndex: 1,
        },
      ]);
      expect((await store.loadRun(runId))?.status).toBe('interrupted');
      // Resuming without the decision changes nothing.
      expect((await second.resume(runId)).stopReason).toBe('decision_required');
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(0);

      // The process that executes it dies inside the call too: the decision was spent by the execution it allowed,
      // so the call is uncertain again rather than executed a third time unasked.
      const dying = new FaultyRunStore(store);
      const again = fixture.gate(`${runId}:1:1`);
      const third = fixture.agent(dying, { owner: 'third', clock: new FakeClock(LATER_MS) });
      const retrying = third.resume(runId, { decisions: { [`${runId}:1:1`]: 'execute' } });
      await again.entered;
      dying.down = true;
      again.release();
      expect((await retrying).stopReason).toBe('store_unavailable');
      const fourth = fixture.agent(store, { owner: 'fourth', clock: new FakeClock(LATER_MS * 2) });
      expect((await fourth.resume(runId)).stopReason).toBe('decision_required');

      const done = await fourth.resume(runId, { decisions: { [`${runId}:1:1`]: 'execute' } });
      expect(done).toMatchObject({ status: 'completed', output: 'done' });
      expect(fixture.executionsOf(`${runId}:1:1`)).toEqual([
        { tool: 'charge', key: `${runId}:1:1`, attempt: 3 },
      ]);
      expect(fixture.executionsOf(`${runId}:1:0`)).toHaveLength(1);
      expect(fixture.requestsByStep).toEqual([1, 1, 1]);
    });

    it('abandons an uncertain call: the model is told the outcome is unknown, and the call never runs', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const gate = fixture.gate(`${runId}:1:1`);
      const running = fixture.agent(faulty, { owner: 'first' }).run('Pay twice', { runId });
      await gate.entered;
      faulty.down = true;
      gate.release();
      await running;
      const second = fixture.agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) });
      const done = await second.resume(runId, { decisions: { [`${runId}:1:1`]: 'abandon' } });
      expect(done.status).toBe('completed');
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(0);
      const told = done.messages.find((message) => message.role === 'tool' && message.toolName === 'charge');
      expect(JSON.parse(told!.content)).toMatchObject({
        status: 'error',
        error: { code: 'tool.failed', data: { outcome: 'unknown' } },
      });
      const entry = (await store.ledger(runId)).find(
        (candidate) => candidate.idempotencyKey === `${runId}:1:1`,
      );
      expect(entry).toMatchObject({ status: 'completed', result: { status: 'error' } });
    });

    it('executes an idempotent call again with the same key when its process died inside it', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const gate = fixture.gate(`${runId}:1:0`);
      const clock = new FakeClock(FIXTURE_START_MS);
      const running = fixture.agent(faulty, { owner: 'first', clock }).run('Pay twice', { runId });
      await gate.entered;
      // A call that runs this long has its start saved while it runs, even where it could wait for its end.
      const writes = faulty.writes;
      await clock.advance(IDEMPOTENT_WAIT_MS);
      if (store.ranCallsInCommit === true) await passedOn(faulty, writes);
      faulty.down = true;
      gate.release();
      await running;
      const done = await fixture
        .agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) })
        .resume(runId);
      expect(done.status).toBe('completed');
      expect(fixture.executionsOf(`${runId}:1:0`)).toEqual([
        { tool: 'lookup', key: `${runId}:1:0`, attempt: 2 },
      ]);
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(1);
    });

    it('asks the model again when its process died inside an idempotent call whose start waited for its end (the call runs again as a first attempt)', async () => {
      if (store.ranCallsInCommit !== true) return;
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      const gate = fixture.gate(`${runId}:1:0`);
      const running = fixture.agent(faulty, { owner: 'first' }).run('Pay twice', { runId });
      await gate.entered;
      const writes = faulty.writes;
      faulty.down = true;
      gate.release();
      expect((await running).stopReason).toBe('store_unavailable');
      // Only the run's creation was saved: the lookup's start waited for its end, with the model's response.
      expect(writes).toBe(1);
      expect(await store.ledger(runId)).toEqual([]);
      const done = await fixture
        .agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) })
        .resume(runId);
      expect(done.status).toBe('completed');
      expect(fixture.requestsByStep).toEqual([2, 1, 1]);
      // The gated execution never had its effect; the one after the resume is a first attempt.
      expect(fixture.executionsOf(`${runId}:1:0`)).toEqual([
        { tool: 'lookup', key: `${runId}:1:0`, attempt: 1 },
      ]);
      expect(fixture.executionsOf(`${runId}:1:1`)).toHaveLength(1);
      expect((await store.ledger(runId)).map((entry) => entry.status)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
    });

    it('lets one owner at a time resume a run: another live owner gets store.conflict until its lease expires', async () => {
      const runId = newRunId();
      const fixture = new DurableFixture();
      const faulty = new FaultyRunStore(store);
      // The first process stops early (before its first charge), holding its lease: after the run's creation and,
      // where the idempotent lookup's start waits for its end, before the write that carries it with the charge's start.
      faulty.writeLimit = store.ranCallsInCommit === true ? 1 : 3;
      await fixture.agent(faulty, { owner: 'first' }).run('Pay twice', { runId });
      const early = fixture.agent(store, { owner: 'second', clock: new FakeClock(FIXTURE_START_MS + 1_000) });
      await expect(early.resume(runId)).rejects.toMatchObject({ code: 'store.conflict' });
      expect(fixture.requestsByStep).toEqual([1]);
      const late = fixture.agent(store, { owner: 'second', clock: new FakeClock(LATER_MS) });
      expect((await late.resume(runId)).status).toBe('completed');
    });
  });
}

/** Turns the event loop (no timer) until `faulty` has passed on more than `writes` writes to its store. */
async function passedOn(faulty: FaultyRunStore, writes: number): Promise<void> {
  for (let turn = 0; faulty.writes <= writes; turn++) {
    if (turn > 10_000) throw new Error(`the store was never handed write ${writes + 1}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
