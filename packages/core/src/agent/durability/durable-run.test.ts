import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import type { RunEvent } from '../../spec/run-events.js';
import type { CheckpointWrite, RunStatus, StepCommit } from '../../spec/run-store.js';
import { MemoryRunStore } from '../../store/memory-run-store.js';
import { DurableFixture, FIXTURE_START_MS } from '../../testing/durable-fixture.js';
import { FakeClock } from '../../testing/fake-clock.js';
import { FaultyRunStore } from '../../testing/faulty-run-store.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from '../run/run-state.js';
import { tool } from '../tools/tool.js';
import { IDEMPOTENT_WAIT_MS } from './durable-writes.js';

/** A store that keeps a copy of every checkpoint it was asked to save, with the ledger keys of its commit. */
class RecordingStore extends MemoryRunStore {
  readonly saved: Array<{ status: RunStatus; state: RunState; ledger: string[] }> = [];
  override async saveCheckpoint(runId: string, checkpoint: CheckpointWrite): Promise<number> {
    const version = await super.saveCheckpoint(runId, checkpoint);
    this.record(checkpoint, []);
    return version;
  }
  override async commitStep(runId: string, commit: StepCommit): Promise<number> {
    const version = await super.commitStep(runId, commit);
    this.record(commit.checkpoint, [
      ...(commit.toolsStarted ?? []).map((entry) => `started ${entry.idempotencyKey}`),
      ...(commit.toolsCompleted ?? []).map((entry) => `completed ${entry.idempotencyKey}`),
      ...(commit.toolsRan ?? []).map((entry) => `ran ${entry.idempotencyKey}`),
    ]);
    return version;
  }
  /** The conversation as the checkpoints wrote it to the message log. */
  private conversation: unknown[] = [];
  private record(checkpoint: CheckpointWrite, ledger: string[]): void {
    const state = structuredClone(checkpoint.state) as unknown as RunState;
    const log = checkpoint.messages;
    if (log !== undefined) {
      this.conversation = [...this.conversation.slice(0, log.start), ...structuredClone(log.messages)];
      state.messages = [...this.conversation] as RunState['messages'];
    }
    this.saved.push({ status: checkpoint.status, state, ledger });
  }
}

describe('durable runs', () => {
  it('saves every transition before anything runs outside the process, with the ledger, and frees the lease at the end', async () => {
    const store = new RecordingStore();
    const fixture = new DurableFixture();
    const kinds: string[] = [];
    const assistant = fixture.agent(store, {
      owner: 'me',
      onTransition: (transition) => kinds.push(transition.kind),
    });
    const result = await assistant.run('Pay twice', { runId: 'saved' });
    expect(result).toMatchObject({ status: 'completed', output: 'done', resumable: false });
    expect(result.pending).toBeUndefined();
    expect(kinds).toEqual([
      'run-started',
      'model-response-received',
      'tool-call-started',
      'tool-call-completed',
      'tool-call-started',
      'tool-call-completed',
      'step-ended',
      'model-response-received',
      'tool-call-started',
      'tool-call-completed',
      'step-ended',
      'model-response-received',
      'run-ended',
    ]);
    // run-started is the created record itself. A model response is written with its first call's start (or the
    // run's end), a step's last completion with the step's end: each write comes before anything else runs. The
    // idempotent lookup's start and end wait for the next write (the charge's start): running it again is harmless.
    expect(store.saved.map((saved) => [saved.state.phase, saved.ledger])).toEqual([
      ['tools', ['started saved:1:1', 'ran saved:1:0']],
      ['model', ['completed saved:1:1']],
      ['tools', ['started saved:2:0']],
      ['model', ['completed saved:2:0']],
      ['ended', []],
    ]);
    const first = store.saved[0]!.state;
    expect(first.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(first.pendingToolCalls[0]).toMatchObject({ status: 'completed', attempts: 1 });
    expect(first.pendingToolCalls[1]).toMatchObject({ status: 'started', attempts: 1 });
    expect(store.saved.at(-1)).toMatchObject({
      status: 'completed',
      state: { schemaVersion: RUN_STATE_SCHEMA_VERSION, output: 'done' },
    });
    const record = await store.loadRun('saved');
    expect(record).toMatchObject({
      status: 'completed',
      version: 6,
      schemaVersion: RUN_STATE_SCHEMA_VERSION,
      agentName: 'durable-fixture',
    });
    expect(
      (await store.ledger('saved')).map((entry) => [entry.idempotencyKey, entry.status, entry.toolName]),
    ).toEqual([
      ['saved:1:0', 'completed', 'lookup'],
      ['saved:1:1', 'completed', 'charge'],
      ['saved:2:0', 'completed', 'charge'],
    ]);
    // Released: another owner takes the lease at once.
    expect((await store.acquireLease('saved', 'other', 1_000, FIXTURE_START_MS)).owner).toBe('other');
  });

  it('refuses a run id already in the store with config.invalid, and fails a run whose store is down', async () => {
    const store = new MemoryRunStore();
    const fixture = new DurableFixture();
    const assistant = fixture.agent(store, { owner: 'me' });
    await assistant.run('Pay twice', { runId: 'taken' });
    await expect(assistant.run('again', { runId: 'taken' })).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('already exists in the store'),
    });
    const faulty = new FaultyRunStore(store);
    faulty.down = true;
    const down = await fixture.agent(faulty, { owner: 'me' }).run('Pay twice', { runId: 'down' });
    expect(down).toMatchObject({ status: 'failed', stopReason: 'store_unavailable', resumable: false });
    expect(down.error?.code).toBe('store.unavailable');
    expect(fixture.requestsByStep).toEqual([1, 1, 1]);
  });

  it("writes an idempotent call's start before it runs when a fallback tool in its place is not idempotent", async () => {
    const store = new RecordingStore();
    const notify = tool({
      name: 'notify',
      description: 'Sends a text message',
      input: { type: 'object', properties: {} } as const,
      execute: () => 'sent',
    });
    const lookup = (fallbacks: boolean) =>
      tool({
        name: 'lookup',
        description: 'Looks the order up',
        input: { type: 'object', properties: {} } as const,
        idempotent: true,
        ...(fallbacks ? { fallbacks: [{ tool: notify, reason: 'Tell the customer instead' }] } : {}),
        execute: () => 'found',
      });
    const run = (fallbacks: boolean, runId: string) =>
      agent({
        model: scriptedModel([{ toolCalls: [{ name: 'lookup' }] }, { content: 'done' }]),
        tools: fallbacks ? [lookup(true), notify] : [lookup(false)],
        clock: new FakeClock(FIXTURE_START_MS),
        store,
        durability: { owner: 'me' },
      }).run('go', { runId });
    await run(false, 'alone');
    await run(true, 'guarded');
    const ledgers = (runId: string) =>
      store.saved.filter((saved) => saved.state.runId === runId).map((saved) => saved.ledger);
    // Alone, the call may run again harmlessly: its start and end go with the step's end.
    expect(ledgers('alone')).toEqual([['ran alone:1:0'], []]);
    // With a fallback that is not idempotent, its start is saved before anything runs.
    expect(ledgers('guarded')).toEqual([['started guarded:1:0'], ['completed guarded:1:0'], []]);
  });

  it('renews its lease with a heartbeat while a long call runs, and halts when another process takes it', async () => {
    const inner = new MemoryRunStore();
    const store = new FaultyRunStore(inner);
    const clock = new FakeClock(FIXTURE_START_MS);
    let toolSignal: AbortSignal | undefined;
    let finishTool: (() => void) | undefined;
    const slow = tool({
      name: 'slow',
      description: 'takes minutes',
      input: { type: 'object', properties: {} } as const,
      idempotent: true,
      timeoutMs: 600_000,
      execute: (_input, context) =>
        new Promise<string>((resolve) => {
          toolSignal = context.signal;
          finishTool = () => resolve('finished');
        }),
    });
    const events: RunEvent[] = [];
    const assistant = agent({
      model: scriptedModel((request) =>
        request.messages.some((message) => message.role === 'tool')
          ? { content: 'ok' }
          : { toolCalls: [{ name: 'slow' }] },
      ),
      tools: [slow],
      clock,
      store,
      durability: { owner: 'me', leaseTtlMs: 30_000 },
      onEvent: (event) => events.push(event),
    });
    const first = assistant.run('go', { runId: 'long' });
    await clock.advance(0);
    expect(toolSignal).toBeDefined();
    // 45 s into the call: without the heartbeat the 30 s lease would have expired.
    await clock.advance(45_000);
    await expect(inner.acquireLease('long', 'other', 30_000, clock.now())).rejects.toMatchObject({
      code: 'store.conflict',
    });
    finishTool!();
    expect(await first).toMatchObject({ status: 'completed', output: 'ok' });
    expect(clock.pendingTimers).toBe(0);

    // Now a call during which the store cannot be reached long enough for the lease to expire.
    const second = assistant.run('go', { runId: 'lost' });
    // The idempotent call's start is saved once it has run this long (it waits for its end until then).
    await clock.advance(IDEMPOTENT_WAIT_MS);
    store.down = true;
    await clock.advance(31_000);
    store.down = false;
    await inner.acquireLease('lost', 'other', 30_000, clock.now());
    await clock.advance(10_000);
    expect(toolSignal?.aborted).toBe(true);
    const lost = await second;
    expect(lost).toMatchObject({ status: 'interrupted', stopReason: 'lease_lost', resumable: true });
    expect(lost.error?.code).toBe('store.conflict');
    expect(events.filter((event) => event.type === 'run-end').map((event) => event.type)).toHaveLength(2);
  });

  it('reports store retries as events and in the report', async () => {
    const store = new FaultyRunStore(new MemoryRunStore());
    const clock = new FakeClock(FIXTURE_START_MS);
    const events: RunEvent[] = [];
    let calls = 0;
    const model = scriptedModel(() => {
      calls++;
      if (calls === 1) store.down = true;
      return { content: 'hi' };
    });
    const running = agent({ model, clock, store, durability: { storeMaxAttempts: 2 } }).run('hi', {
      onEvent: (event) => events.push(event),
    });
    await clock.advance(0);
    store.down = false;
    await clock.advance(100);
    const result = await running;
    expect(result.status).toBe('completed');
    expect(result.report.retries).toMatchObject({ total: 1, store: 1 });
    expect(events.find((event) => event.type === 'retry-scheduled')).toMatchObject({
      target: 'store',
      attempt: 1,
      delayMs: 100,
      errorCode: 'store.unavailable',
    });
  });

  it('interrupts for approval without a store too, but only a stored run is resumable', async () => {
    const fixture = new DurableFixture();
    fixture.script = [{ toolCalls: [{ name: 'send_mail', arguments: { to: 'x@elsewhere.org' } }] }];
    const assistant = agent({ model: fixture.model, tools: fixture.tools() });
    const result = await assistant.run('mail', { runId: 'memory-only' });
    expect(result).toMatchObject({
      status: 'interrupted',
      stopReason: 'approval_required',
      resumable: false,
    });
    expect(result.pending).toMatchObject([{ kind: 'approval', idempotencyKey: 'memory-only:1:0' }]);
    expect(result.state.pendingToolCalls).toHaveLength(1);
    expect(result.state.phase).toBe('tools');
    await expect(assistant.resume('memory-only')).rejects.toMatchObject({ code: 'config.invalid' });
  });

  it('does not count the hours a run waited for approval against its timeout, and says it resumed', async () => {
    const store = new MemoryRunStore();
    const fixture = new DurableFixture();
    fixture.script = [
      { toolCalls: [{ name: 'send_mail', arguments: { to: 'x@elsewhere.org' } }] },
      { content: 'sent' },
    ];
    const interrupted = await fixture.agent(store, { owner: 'me' }).run('mail', { runId: 'slow-human' });
    const deadline = interrupted.state.deadlineAtMs;
    expect(deadline).toBe(FIXTURE_START_MS + 600_000);
    const threeHoursMs = 3 * 3_600_000;
    const events: RunEvent[] = [];
    const transitions: string[] = [];
    const later = fixture.agent(store, {
      owner: 'me',
      clock: new FakeClock(FIXTURE_START_MS + threeHoursMs),
      onTransition: (transition) => transitions.push(transition.kind),
    });
    const done = await later.resume('slow-human', {
      approvals: { 'slow-human:1:0': { approved: true } },
      onEvent: (event) => events.push(event),
    });
    expect(done).toMatchObject({ status: 'completed', output: 'sent' });
    expect(done.state.deadlineAtMs).toBe(deadline + threeHoursMs);
    expect(events[0]).toMatchObject({ type: 'run-resumed', runId: 'slow-human', step: 1 });
    expect(transitions[0]).toBe('run-resumed');
    expect(fixture.executionsOf('slow-human:1:0')).toHaveLength(1);
  });

  it('lets only one of two concurrent resumes in one process proceed', async () => {
    const store = new MemoryRunStore();
    const fixture = new DurableFixture();
    fixture.script = [
      { toolCalls: [{ name: 'send_mail', arguments: { to: 'x@elsewhere.org' } }] },
      { content: 'sent' },
    ];
    await fixture.agent(store, { owner: 'a' }).run('mail', { runId: 'twice' });
    const approvals = { 'twice:1:0': { approved: true as const } };
    const outcomes = await Promise.allSettled([
      fixture.agent(store, { owner: 'a' }).resume('twice', { approvals }),
      fixture.agent(store, { owner: 'b' }).resume('twice', { approvals }),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(KeelError.isInstance(rejected.reason) && rejected.reason.code).toBe('store.conflict');
    expect(fixture.executionsOf('twice:1:0')).toHaveLength(1);
  });

  it('checks the store and durability options', () => {
    const model = scriptedModel([]);
    const store = new MemoryRunStore();
    expect(() => agent({ model, store: {} as never })).toThrow(/store must be a RunStore.*createRun/);
    expect(() => agent({ model, durability: { leaseTtlMs: 1_000 } })).toThrow(/durability needs a store/);
    expect(() => agent({ model, store, durability: { leaseTtlMs: 5 } })).toThrow(/leaseTtlMs must be/);
    expect(() => agent({ model, store, durability: { owner: '' } })).toThrow(/owner must be/);
    expect(() => agent({ model, store, durability: { storeMaxAttempts: 0 } })).toThrow(/storeMaxAttempts/);
    expect(() => agent({ model, store, durability: { ttl: 1 } as never })).toThrow(
      /unknown durability option "ttl"/,
    );
  });
});
