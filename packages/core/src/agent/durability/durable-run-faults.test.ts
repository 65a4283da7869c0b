import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CheckpointWrite, StepCommit } from '../../spec/run-store.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { DurableFixture, FIXTURE_START_MS } from '../../testing/durable-fixture.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { FaultyRunStore } from '../../testing/faulty-run-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import type { RunResult } from '../loop/run.js';
import { RUN_STATE_SCHEMA_VERSION } from '../run/run-state.js';
import { tool } from '../tools/tool.js';

/** Advances the clock in steps until `pending` settles (at most `limitMs`); resolves whether it settled. */
async function settleOnClock(clock: FakeClock, pending: Promise<unknown>, limitMs: number): Promise<boolean> {
  let settled = false;
  pending.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let elapsedMs = 0; elapsedMs <= limitMs && !settled; elapsedMs += 250) await clock.advance(250);
  return settled;
}

/** A store that, just before a run's end is saved, gets a cancellation request from "another process". */
class CancelledAtTheEndStore extends MemoryRunStore {
  requested = false;
  override async saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    await this.cancelFirstEnd(runId, checkpoint);
    return super.saveCheckpoint(runId, checkpoint);
  }
  override async commitStep(runId: string, commit: StepCommit): Promise<number> {
    await this.cancelFirstEnd(runId, commit.checkpoint);
    return super.commitStep(runId, commit);
  }
  private async cancelFirstEnd(runId: string, checkpoint: CheckpointWrite): Promise<void> {
    if (checkpoint.status !== 'running' && !this.requested) {
      this.requested = true;
      await this.requestCancellation(runId, 'pressed stop too late', checkpoint.nowMs);
    }
  }
}

/** A store whose releaseLease never answers. */
class HungReleaseStore extends MemoryRunStore {
  override releaseLease(): Promise<void> {
    return new Promise(() => undefined);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('durable runs: late work, late requests, hung stores', () => {
  it('keeps a cancelled run cancelled when its slow approval check answers after the end', async () => {
    const store = new MemoryRunStore();
    const clock = new FakeClock(FIXTURE_START_MS);
    let answer!: (needed: boolean) => void;
    let executions = 0;
    const charge = tool({
      name: 'charge',
      description: 'charges',
      input: { type: 'object' },
      needsApproval: () =>
        new Promise<boolean>((resolve) => {
          answer = resolve;
        }),
      execute: () => {
        executions++;
        return 'charged';
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'charge' }] }, { content: 'after the end' }]);
    const assistant = agent({ model, tools: [charge], store, clock, durability: { owner: 'first' } });
    const controller = new AbortController();
    const running = assistant.run('go', { runId: 'late', signal: controller.signal });
    await clock.advance(10);
    controller.abort();
    expect(await running).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    const ended = await store.loadRun('late');
    expect(ended?.status).toBe('cancelled');

    answer(false); // no approval needed after all: the call would start now
    for (let round = 0; round < 5; round++) await clock.advance(10);
    const after = await store.loadRun('late');
    expect(after).toMatchObject({ status: 'cancelled', version: ended!.version });
    expect(after?.state).toEqual(ended?.state);
    expect(await store.ledger('late')).toEqual([]);
    expect(executions).toBe(0);
    // The lease was released for good: nothing took it back.
    expect((await store.acquireLease('late', 'second', 30_000, clock.now())).owner).toBe('second');
    await store.releaseLease('late', 'second');

    const resumed = await agent({
      model,
      tools: [charge],
      store,
      clock,
      durability: { owner: 'second' },
    }).resume('late');
    expect(resumed).toMatchObject({ status: 'cancelled', resumable: false });
    expect(model.calls).toHaveLength(1);
  });

  it('saves nothing for a call whose slow validator rejects it after the run was cancelled', async () => {
    const store = new MemoryRunStore();
    const clock = new FakeClock(FIXTURE_START_MS);
    let reject!: () => void;
    // A Standard Schema whose (remote, say) validation answers late: the call then completes as a correction.
    const slowSchema = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: () =>
          new Promise<{ issues: Array<{ message: string }> }>((resolve) => {
            reject = () => resolve({ issues: [{ message: 'refused late' }] });
          }),
      },
    };
    const echo = tool({
      name: 'echo',
      description: 'echoes',
      input: slowSchema,
      inputJsonSchema: { type: 'object' },
      execute: () => 'echo',
    });
    const assistant = agent({
      model: scriptedModel([{ toolCalls: [{ name: 'echo' }] }, { content: 'x' }]),
      tools: [echo],
      store,
      clock,
      durability: { owner: 'first' },
    });
    const controller = new AbortController();
    const running = assistant.run('go', { runId: 'validated', signal: controller.signal });
    await clock.advance(10);
    controller.abort();
    expect((await running).status).toBe('cancelled');
    const ended = await store.loadRun('validated');
    reject();
    for (let round = 0; round < 5; round++) await clock.advance(10);
    expect(await store.loadRun('validated')).toMatchObject({ status: 'cancelled', version: ended!.version });
    expect((await store.acquireLease('validated', 'second', 30_000, clock.now())).owner).toBe('second');
  });

  it('treats a stored state that says the run ended as ended, even when the record still says running', async () => {
    const fixture = new DurableFixture();
    const completed = await fixture
      .agent(new MemoryRunStore(), { owner: 'a' })
      .run('Pay twice', { runId: 'done' });
    expect(completed.state).toMatchObject({ status: 'completed', phase: 'ended' });
    const store = new MemoryRunStore();
    await store.createRun({
      runId: 'done',
      agentName: 'durable-fixture',
      status: 'running',
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      state: JSON.parse(JSON.stringify(completed.state)),
      createdAtMs: FIXTURE_START_MS,
    });
    const requests = fixture.model.calls.length;
    const resumed = await fixture.agent(store, { owner: 'b' }).resume('done');
    expect(resumed).toMatchObject({ status: 'completed', output: 'done', resumable: false });
    expect(fixture.model.calls).toHaveLength(requests);
    expect(fixture.executions).toHaveLength(3);
  });

  it('saves the end a run reached when a cancellation request arrives just before it, so result and store agree', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const store = new CancelledAtTheEndStore();
    const assistant = agent({
      model: scriptedModel([{ content: 'finished' }]),
      store,
      clock: new FakeClock(FIXTURE_START_MS),
      durability: { owner: 'me' },
    });
    const result = await assistant.run('go', { runId: 'raced' });
    expect(store.requested).toBe(true);
    expect(result).toMatchObject({ status: 'completed', output: 'finished' });
    const record = await store.loadRun('raced');
    expect(record?.status).toBe('completed');
    expect(record?.state).toMatchObject({ status: 'completed', output: 'finished' });
    expect(warnings).not.toHaveBeenCalled();
  });

  it('honours a cancellation that arrived just before an interruption was saved, at the next resume', async () => {
    const store = new CancelledAtTheEndStore();
    const fixture = new DurableFixture();
    fixture.script = [{ toolCalls: [{ name: 'send_mail', arguments: { to: 'x@elsewhere.org' } }] }];
    const interrupted = await fixture.agent(store, { owner: 'me' }).run('mail', { runId: 'waiting' });
    expect(interrupted).toMatchObject({ status: 'interrupted', stopReason: 'approval_required' });
    expect((await store.loadRun('waiting'))?.status).toBe('interrupted');
    const resumed = await fixture
      .agent(store, { owner: 'me' })
      .resume('waiting', { approvals: { 'waiting:1:0': { approved: true } } });
    expect(resumed).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    expect(fixture.executions).toEqual([]);
  });

  it('pauses a run whose store stops answering, after storeTimeoutMs per attempt', async () => {
    const clock = new FakeClock(FIXTURE_START_MS);
    const store = new FaultyRunStore(new MemoryRunStore());
    const model = scriptedModel(() => {
      store.hung = model.calls.length === 1; // the first answer is never saved
      return { content: 'never saved' };
    });
    const assistant = agent({
      model,
      store,
      clock,
      durability: { owner: 'me', storeMaxAttempts: 2, storeTimeoutMs: 1_000 },
    });
    const running = assistant.run('go', { runId: 'hung' });
    expect(await settleOnClock(clock, running, 10_000)).toBe(true);
    const result = await running;
    expect(result).toMatchObject({ status: 'interrupted', stopReason: 'store_unavailable', resumable: true });
    expect(result.error).toMatchObject({ code: 'store.unavailable', data: { timeoutMs: 1_000 } });
    // Two attempts of 1 s and one backoff of 100 ms, within the steps the clock took.
    expect(clock.now() - FIXTURE_START_MS).toBeGreaterThanOrEqual(2_100);
    expect(clock.now() - FIXTURE_START_MS).toBeLessThanOrEqual(2_600);
    expect(store.refused).toEqual(['commitStep', 'commitStep']);

    store.hung = false;
    const resumed = await assistant.resume('hung');
    expect(resumed).toMatchObject({ status: 'completed', output: 'never saved' });
  });

  it('refuses to resume on a store that does not answer, and fails a run whose record cannot be created', async () => {
    const clock = new FakeClock(FIXTURE_START_MS);
    const store = new FaultyRunStore(new MemoryRunStore());
    store.hung = true;
    const assistant = agent({
      model: scriptedModel([{ content: 'x' }]),
      store,
      clock,
      durability: { owner: 'me', storeMaxAttempts: 1, storeTimeoutMs: 500 },
    });
    const resuming = assistant.resume('anything');
    resuming.catch(() => undefined);
    expect(await settleOnClock(clock, resuming, 5_000)).toBe(true);
    await expect(resuming).rejects.toMatchObject({ code: 'store.unavailable' });

    const starting = assistant.run('go', { runId: 'never-created' });
    expect(await settleOnClock(clock, starting, 5_000)).toBe(true);
    expect(await starting).toMatchObject({ status: 'failed', stopReason: 'store_unavailable' });
  });

  it('ends a run whose lease release never answers', async () => {
    const clock = new FakeClock(FIXTURE_START_MS);
    const store = new HungReleaseStore();
    const running: Promise<RunResult> = agent({
      model: scriptedModel([{ content: 'released or not' }]),
      store,
      clock,
      durability: { owner: 'me' },
    }).run('go', { runId: 'release' });
    expect(await settleOnClock(clock, running, 15_000)).toBe(true);
    expect(await running).toMatchObject({ status: 'completed', output: 'released or not' });
    expect((await store.loadRun('release'))?.status).toBe('completed');
  });

  it('checks storeTimeoutMs', () => {
    const model = scriptedModel([]);
    const store = new MemoryRunStore();
    for (const storeTimeoutMs of [0, -1, 1.5, 600_001]) {
      expect(() => agent({ model, store, durability: { storeTimeoutMs } })).toThrow(
        expect.objectContaining({
          code: 'config.invalid',
          message: expect.stringContaining('storeTimeoutMs'),
        }),
      );
    }
  });
});
