// Applying an answer is idempotent across a crash at any point: a process that dies after the ledger holds the
// decided call's result but before its checkpoint leaves the run `interrupted`, and the same answer sent again (a
// fleet's answer job taken by another worker) must reach the run rather than be refused as naming nothing pending.
import { describe, expect, it } from 'vitest';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { DurableFixture, FIXTURE_START_MS } from '../../testing/durable-fixture.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { FaultyRunStore } from '../../testing/faulty-run-store.js';
import type { ToolCallDecision } from '../run/pending-decision.js';

const MINUTE_MS = 60_000;

/** A run interrupted for a decision about `charge` (its first process died inside the call, before the effect). */
async function interruptedRun(runId: string): Promise<{ store: MemoryRunStore; fixture: DurableFixture }> {
  const store = new MemoryRunStore();
  const fixture = new DurableFixture();
  const faulty = new FaultyRunStore(store);
  const gate = fixture.gate(`${runId}:1:1`);
  const running = fixture.agent(faulty, { owner: 'first' }).run('Pay twice', { runId });
  await gate.entered;
  faulty.down = true;
  gate.release();
  expect((await running).stopReason).toBe('store_unavailable');
  const waiting = await fixture
    .agent(store, { owner: 'second', clock: new FakeClock(FIXTURE_START_MS + MINUTE_MS) })
    .resume(runId);
  expect(waiting.stopReason).toBe('decision_required');
  return { store, fixture };
}

/** Writes the answering process makes before the run's next checkpoint, counted on a clean answer. */
async function writesOfAnAnswer(decision: ToolCallDecision): Promise<number> {
  const runId = `count-${decision}`;
  const { store, fixture } = await interruptedRun(runId);
  const counting = new FaultyRunStore(store);
  await fixture
    .agent(counting, { owner: 'counting', clock: new FakeClock(FIXTURE_START_MS + 2 * MINUTE_MS) })
    .resume(runId, { decisions: { [`${runId}:1:1`]: decision } });
  return counting.writes;
}

describe('an answer sent again after the process applying it died', () => {
  it.each<ToolCallDecision>(['abandon', 'execute'])(
    'reaches the run after a crash between any two writes of its application (%s), the effect at most once',
    async (decision) => {
      const totalWrites = await writesOfAnAnswer(decision);
      expect(totalWrites).toBeGreaterThan(3);
      let resent = 0;
      for (let limit = 1; limit < totalWrites; limit++) {
        const runId = `${decision}-${limit}`;
        const key = `${runId}:1:1`;
        const { store, fixture } = await interruptedRun(runId);
        const dying = new FaultyRunStore(store);
        dying.writeLimit = limit;
        const crashed = await fixture
          .agent(dying, { owner: 'dying', clock: new FakeClock(FIXTURE_START_MS + 2 * MINUTE_MS) })
          .resume(runId, { decisions: { [key]: decision } })
          .catch((error: unknown) => error);
        const stopped = crashed as { code?: string; stopReason?: string };
        expect(stopped.code ?? stopped.stopReason, `crash after ${limit} writes`).toMatch(
          /^store[._]unavailable$/,
        );
        const record = await store.loadRun(runId);
        if (record?.status !== 'interrupted') continue; // the run moved on: the answer is no longer sent with it

        // The same answer again, from another process once the dead one's lease has run out.
        resent++;
        const done = await fixture
          .agent(store, { owner: 'again', clock: new FakeClock(FIXTURE_START_MS + 4 * MINUTE_MS) })
          .resume(runId, { decisions: { [key]: decision } });
        expect(done, `crash after ${limit} writes`).toMatchObject({ status: 'completed', output: 'done' });
        expect(fixture.executionsOf(key), `crash after ${limit} writes`).toHaveLength(
          decision === 'execute' ? 1 : 0,
        );
        const told = done.messages.find(
          (message) => message.role === 'tool' && message.toolName === 'charge',
        );
        expect(JSON.parse(told?.content ?? '{}').status).toBe(decision === 'execute' ? 'success' : 'error');
      }
      // Crashes that left the run interrupted (for abandon, the ledger ahead of the checkpoint among them; an
      // execution's first checkpoint makes the run running, and a worker sends no answer with a running run).
      expect(resent).toBeGreaterThan(decision === 'abandon' ? 1 : 0);
    },
  );

  it('still refuses a decision about a call the run never waited for', async () => {
    const runId = 'unknown-key';
    const { store, fixture } = await interruptedRun(runId);
    await expect(
      fixture
        .agent(store, { owner: 'third', clock: new FakeClock(FIXTURE_START_MS + 2 * MINUTE_MS) })
        .resume(runId, { decisions: { [`${runId}:1:0`]: 'abandon' } }),
    ).rejects.toMatchObject({ code: 'config.invalid', message: expect.stringMatching(/does not wait for/) });
  });
});
