import type { Message } from '../spec/model.js';
import type { RunStore, SessionAppend } from '../spec/run-store.js';
import { errorOf, runIds } from './contract-support.js';
import { FakeClock } from './fake-clock.js';
import { FaultyRunStore } from './faulty-run-store.js';
import { SESSION_START_MS, SessionFixture } from './session-fixture.js';
import { afterEach, beforeEach, describe, expect, it } from './vitest-functions.js';

const AFTER_LEASE_MS = SESSION_START_MS + 31_000;

/** The messages of a session, every turn's in order. */
async function sessionMessages(store: RunStore, sessionId: string): Promise<Message[]> {
  const session = await store.loadSession(sessionId);
  return (session?.turns ?? []).flatMap((turn) => turn.messages as unknown as Message[]);
}

/**
 * Agents running on sessions in a store: a conversation over several runs and across a restart of the store, one run
 * at a time on a session (the second waits or fails), and crashes, failures and cancellations that leave the session
 * with completed turns only. Part of the RunStore contract. `persistent`: a store made again by `createStore` holds
 * what the first one stored (a file, a database), so a restart is a new store; otherwise it is a new agent on the same
 * store.
 */
export function sessionRunScenarios(
  name: string,
  createStore: () => RunStore | Promise<RunStore>,
  persistent: boolean,
): void {
  describe(`runs on sessions in ${name}`, () => {
    let store: RunStore;
    const newId = runIds('chat');
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it(`keeps a conversation over several runs${persistent ? ' and across a restart of the store' : ''}`, async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      const first = fixture.agent(store, { owner: 'process-a' });
      const hello = await first.run('I am Ana', { sessionId });
      expect(hello).toMatchObject({
        status: 'completed',
        output: 'noted: I am Ana',
        session: { sessionId, outcome: 'saved', version: 1 },
      });
      const weather = await first.run('weather Paris', { sessionId });
      expect(weather).toMatchObject({ output: 'done: {"status":"success","content":"Paris: sunny"}' });
      expect(weather.session).toEqual({ sessionId, outcome: 'saved', version: 2 });
      // The second run was sent the first one's turns, after the instructions.
      expect(fixture.requests[1]?.map((message) => message.role)).toEqual([
        'system',
        'user',
        'assistant',
        'user',
      ]);
      if (persistent) {
        await store.close();
        store = await createStore();
      }
      const later = fixture.agent(store, {
        owner: 'process-b',
        clock: new FakeClock(SESSION_START_MS + 3_600_000),
      });
      const recalled = await later.run('recall', { sessionId });
      expect(recalled.output).toBe('you said: I am Ana | weather Paris');
      const session = await store.loadSession(sessionId);
      expect(session).toMatchObject({ sessionId, agentName: 'session-fixture', version: 3, messageCount: 8 });
      expect(session).not.toHaveProperty('activeRunId');
      expect(session?.turns.map((turn) => turn.runId)).toEqual([hello.runId, weather.runId, recalled.runId]);
      // The session keeps the turns (the tool call and its result included), never the instructions.
      expect((await sessionMessages(store, sessionId)).map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
        'tool',
        'assistant',
        'user',
        'assistant',
      ]);
      expect(recalled.messages.slice(1)).toEqual(await sessionMessages(store, sessionId));
    });

    it('lets one run at a time hold a session: the next one waits for it, or fails at once', async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      const clock = new FakeClock(SESSION_START_MS);
      const assistant = fixture.agent(store, { owner: 'process-a', clock });
      const gate = fixture.gate('Oslo');
      const first = assistant.run('weather Oslo', { sessionId });
      await gate.entered;
      const holder = (await store.loadSession(sessionId))?.activeRunId;
      const refused = await errorOf(assistant.run('recall', { sessionId, sessionBusy: 'fail' }));
      expect(refused).toMatchObject({
        code: 'store.conflict',
        data: { sessionId, activeRunId: holder, activeRunStatus: 'running' },
      });
      expect(refused.message).toContain("sessionBusy: 'fail'");
      let waited: unknown;
      const second = assistant.run('recall', { sessionId }).then((result) => {
        waited = result;
        return result;
      });
      await clock.advance(1_000);
      expect(waited).toBeUndefined();
      gate.release();
      expect(await first).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 1 } });
      const after = await second;
      expect(after).toMatchObject({ status: 'completed', output: 'you said: weather Oslo' });
      expect(after.session).toEqual({ sessionId, outcome: 'saved', version: 2 });
      const session = await store.loadSession(sessionId);
      expect(session?.turns.map((turn) => turn.messages.length)).toEqual([4, 2]);
      expect(fixture.executions).toHaveLength(1);
    });

    it('waits for a busy session no longer than sessionWaitMs', async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      const clock = new FakeClock(SESSION_START_MS);
      const assistant = fixture.agent(store, { owner: 'process-a', clock });
      const gate = fixture.gate('Rome');
      const first = assistant.run('weather Rome', { sessionId });
      await gate.entered;
      const second = errorOf(assistant.run('recall', { sessionId, sessionWaitMs: 2_000 }));
      await clock.advance(2_000);
      const refused = await second;
      expect(refused.code).toBe('store.conflict');
      expect(refused.message).toContain('after 2000 ms');
      gate.release();
      expect((await first).session?.outcome).toBe('saved');
      expect((await store.loadSession(sessionId))?.version).toBe(1);
    });

    it('keeps only the completed turns when a run crashes, and appends the resumed run when it completes', async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      await fixture.agent(store, { owner: 'process-a' }).run('I am Ana', { sessionId });
      const crashing = new FaultyRunStore(store);
      // The run is created (leased); the process dies at the next write: the model's response with its call's start,
      // so the call never runs.
      crashing.writeLimit = 1;
      const crashed = await fixture
        .agent(crashing, { owner: 'process-a' })
        .run('weather Oslo', { sessionId });
      expect(crashed).toMatchObject({ status: 'interrupted', stopReason: 'store_unavailable' });
      expect(crashed.session).toEqual({ sessionId, outcome: 'held' });
      let session = await store.loadSession(sessionId);
      expect(session).toMatchObject({ version: 1, activeRunId: crashed.runId });
      expect((await sessionMessages(store, sessionId)).map((message) => message.content)).toEqual([
        'I am Ana',
        'noted: I am Ana',
      ]);

      // Another process finds the session held by a run that stopped without ending: resume it or cancel it.
      const other = fixture.agent(store, { owner: 'process-b', clock: new FakeClock(AFTER_LEASE_MS) });
      const blocked = await errorOf(other.run('recall', { sessionId }));
      expect(blocked).toMatchObject({ code: 'store.conflict', data: { activeRunId: crashed.runId } });
      expect(blocked.message).toContain(`keel resume ${crashed.runId}`);

      const resumed = await other.resume(crashed.runId);
      expect(resumed).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 2 } });
      const recalled = await other.run('recall', { sessionId });
      expect(recalled.output).toBe('you said: I am Ana | weather Oslo');
      session = await store.loadSession(sessionId);
      expect(session?.turns.map((turn) => turn.runId)).toEqual([
        session!.turns[0]!.runId,
        crashed.runId,
        recalled.runId,
      ]);
      // The crashed run's turn is whole and once: its question, the call, its result, the answer.
      expect(session?.turns[1]?.messages.map((message) => (message as { role: string }).role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ]);
    });

    it('appends nothing for a failed or cancelled run, and frees the session', async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      const assistant = fixture.agent(store, { owner: 'process-a' });
      await assistant.run('I am Ana', { sessionId });
      const failed = await assistant.run('fail', { sessionId });
      expect(failed).toMatchObject({ status: 'failed', session: { sessionId, outcome: 'discarded' } });
      const gate = fixture.gate('Lima');
      const runId = newId();
      const cancelled = assistant.run('weather Lima', { sessionId, runId });
      await gate.entered;
      expect(assistant.cancel(runId, 'user pressed Ctrl-C')).toBe(true);
      gate.release();
      expect(await cancelled).toMatchObject({ status: 'cancelled', session: { outcome: 'discarded' } });
      const session = await store.loadSession(sessionId);
      expect(session).toMatchObject({ version: 1, messageCount: 2 });
      expect(session).not.toHaveProperty('activeRunId');
      expect((await assistant.run('recall', { sessionId })).output).toBe('you said: I am Ana');
    });

    it('holds the session while a run waits for approval, and appends it when the approved resume completes', async () => {
      const sessionId = newId();
      const fixture = new SessionFixture();
      const assistant = fixture.agent(store, { owner: 'process-a' });
      const waiting = await assistant.run('mail ana@elsewhere.org', { sessionId });
      expect(waiting).toMatchObject({ status: 'interrupted', session: { outcome: 'held' } });
      const refused = await errorOf(assistant.run('recall', { sessionId }));
      expect(refused.message).toContain('is interrupted');
      const key = waiting.pending![0]!.idempotencyKey;
      const done = await assistant.resume(waiting.runId, { approvals: { [key]: { approved: true } } });
      expect(done).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 1 } });
      expect((await assistant.run('recall', { sessionId })).output).toBe('you said: mail ana@elsewhere.org');
      expect(fixture.executions).toEqual([key]);
    });

    it('appends the turns of a completed run whose append failed: on its resume, or before the next run', async () => {
      for (const repair of ['resume', 'next run'] as const) {
        const sessionId = newId();
        const fixture = new SessionFixture();
        const failing = new FaultyRunStore(store);
        failing.appendSessionTurn = (_sessionId: string, _append: SessionAppend) =>
          Promise.reject(new Error('connection reset while appending'));
        const unsaved = await fixture.agent(failing, { owner: 'process-a' }).run('I am Ana', { sessionId });
        expect(unsaved).toMatchObject({
          status: 'completed',
          session: { sessionId, outcome: 'unsaved', error: { code: 'store.unavailable' } },
        });
        expect(await store.loadSession(sessionId)).toMatchObject({ version: 0, activeRunId: unsaved.runId });
        const assistant = fixture.agent(store, { owner: 'process-b' });
        if (repair === 'resume') {
          const again = await assistant.resume(unsaved.runId);
          expect(again).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 1 } });
        }
        const recalled = await assistant.run('recall', { sessionId });
        expect(recalled.output).toBe('you said: I am Ana');
        expect((await store.loadSession(sessionId))?.turns.map((turn) => turn.runId)).toEqual([
          unsaved.runId,
          recalled.runId,
        ]);
      }
    });
  });
}
