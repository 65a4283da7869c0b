import { type Agent, agent } from '../agent/agent.js';
import type { RunState } from '../agent/run/run-state.js';
import { tool } from '../agent/tools/tool.js';
import type { LedgerEntry, RunStore } from '../spec/run-store.js';
import { runIds } from './contract-support.js';
import { FIXTURE_START_MS } from './durable-fixture.js';
import { FakeClock } from './fake-clock.js';
import { FaultyRunStore } from './faulty-run-store.js';
import { scriptedModel } from './scripted-model.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

/** Steps of the long run: one tool call each, then the answer. */
const LONG_STEPS = 1_000;
/** Later than any lease the crashed process took. */
const LATER_MS = FIXTURE_START_MS + 600_000;

/**
 * An agent whose run takes `steps` steps (a `count` call each, then `done`), the model's answers depending only on
 * how far the conversation has gone; `onStep` hears of each model request (its step, from 1).
 */
function longAgent(
  store: RunStore,
  owner: string,
  options: { steps: number; clock: FakeClock; onStep?: (step: number) => void },
): Agent {
  const count = tool({
    name: 'count',
    description: 'Counts',
    input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const,
    idempotent: true,
    execute: async ({ n }: { n: number }) => ({ counted: n }),
  });
  return agent({
    name: 'long-run',
    model: scriptedModel((request) => {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      options.onStep?.(step);
      return step <= options.steps
        ? { toolCalls: [{ id: `call_${step}`, name: 'count', arguments: { n: step } }] }
        : { content: `counted to ${options.steps}` };
    }),
    tools: [count],
    clock: options.clock,
    limits: { maxTurns: options.steps + 2, timeoutMs: 3_600_000 },
    retry: { maxAttempts: 1, toolMaxAttempts: 1 },
    store,
    durability: { storeMaxAttempts: 1, owner },
  });
}

/** The ledger without its times (a resumed process has its own clock). */
function ledgerShape(ledger: LedgerEntry[]) {
  return ledger.map(({ startedAtMs: _started, completedAtMs: _completed, runId: _runId, ...entry }) => ({
    ...entry,
    idempotencyKey: entry.idempotencyKey.slice(entry.idempotencyKey.indexOf(':')),
  }));
}

/** A store that hides its message log: durable runs on it write their messages inline, as keel did before the log. */
function withoutMessageLog(store: RunStore): RunStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'messageLog') return false;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Durable runs on a store's message log: a long run resumed after a crash near its end is the run never interrupted,
 * and a run whose messages were written inline (by a keel before the log) resumes and moves to the log. Part of the
 * RunStore contract.
 */
export function durableLogScenarios(name: string, createStore: () => RunStore | Promise<RunStore>): void {
  describe(`durable runs on ${name}: the message log`, () => {
    let store: RunStore;
    const newRunId = runIds('long');
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** A run of `steps` steps on `first`, crashed (nothing more reaches the store) when step `crashAt` is asked for. */
    async function crashedRun(first: RunStore, steps: number, crashAt: number) {
      const runId = newRunId();
      const faulty = new FaultyRunStore(first);
      const crashed = await longAgent(faulty, 'first', {
        steps,
        clock: new FakeClock(FIXTURE_START_MS),
        onStep: (step) => {
          if (step === crashAt) faulty.down = true;
        },
      }).run('count', { runId });
      expect(crashed).toMatchObject({
        status: 'interrupted',
        stopReason: 'store_unavailable',
        resumable: true,
      });
      return runId;
    }

    it(`resumes a ${LONG_STEPS}-step run crashed at step ${LONG_STEPS - 1} to the run never interrupted: messages, report, ledger`, async () => {
      const cleanId = newRunId();
      const clean = await longAgent(store, 'clean', {
        steps: LONG_STEPS,
        clock: new FakeClock(FIXTURE_START_MS),
      }).run('count', { runId: cleanId });
      expect(clean).toMatchObject({ status: 'completed', output: `counted to ${LONG_STEPS}` });

      const runId = await crashedRun(store, LONG_STEPS, LONG_STEPS - 1);
      const stored = (await store.loadRun(runId))?.state as unknown as RunState;
      expect(stored.step).toBe(LONG_STEPS - 2);
      const resumed = await longAgent(store, 'second', {
        steps: LONG_STEPS,
        clock: new FakeClock(LATER_MS),
      }).resume(runId);
      expect(resumed).toMatchObject({ status: 'completed', output: `counted to ${LONG_STEPS}` });
      expect(resumed.messages).toEqual(clean.messages);
      // The resumed run's clock is later: only its duration differs.
      expect({ ...resumed.report, durationMs: 0 }).toEqual({ ...clean.report, durationMs: 0 });
      for (const [id, result] of [
        [cleanId, clean],
        [runId, resumed],
      ] as const) {
        const record = await store.loadRun(id);
        expect(record?.status).toBe('completed');
        expect((record!.state as unknown as RunState).messages).toEqual(result.messages);
        if (store.messageLog === true) expect(record?.messageCount).toBe(result.messages.length);
      }
      expect(ledgerShape(await store.ledger(runId))).toEqual(ledgerShape(await store.ledger(cleanId)));
      expect(await store.ledger(runId)).toHaveLength(LONG_STEPS);
    }, 300_000);

    it('resumes a run whose messages a keel before the log wrote inline, and moves them to the log', async () => {
      const steps = 6;
      const clean = await longAgent(store, 'clean', { steps, clock: new FakeClock(FIXTURE_START_MS) }).run(
        'count',
        { runId: newRunId() },
      );
      const runId = await crashedRun(withoutMessageLog(store), steps, 4);
      const inline = await store.loadRun(runId);
      expect(inline?.messageCount).toBeUndefined();
      const resumed = await longAgent(store, 'second', {
        steps,
        clock: new FakeClock(LATER_MS),
      }).resume(runId);
      expect(resumed).toMatchObject({ status: 'completed', output: `counted to ${steps}` });
      expect(resumed.messages).toEqual(clean.messages);
      const record = await store.loadRun(runId);
      expect((record!.state as unknown as RunState).messages).toEqual(clean.messages);
      if (store.messageLog === true) expect(record?.messageCount).toBe(clean.messages.length);
    });
  });
}
