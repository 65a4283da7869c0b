import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import type { Lease } from '../spec/run-store.js';
import { MemoryRunStore } from '../store/memory-run-store.js';
import { FakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { agent } from './agent.js';
import { queuedRun, readQueuedState } from './queued-run.js';
import type { RunState } from './run/run-state.js';

const SUBMITTED_MS = 1_700_000_000_000;
const STARTED_MS = SUBMITTED_MS + 90_000;

function worker(store: MemoryRunStore, model = scriptedModel([{ content: 'done' }])) {
  return {
    model,
    agent: agent({
      name: 'support',
      instructions: 'Be brief.',
      model,
      store,
      clock: new FakeClock(STARTED_MS),
      limits: { timeoutMs: 60_000 },
      durability: { owner: 'worker-a' },
    }),
  };
}

describe('queued runs', () => {
  it('stores the input as a queued run, which a worker starts with resume: instructions first, timeout from then', async () => {
    const store = new MemoryRunStore();
    const record = await store.createRun(
      queuedRun({ runId: 'q1', agentName: 'support', input: 'Refund order 42', nowMs: SUBMITTED_MS }),
    );
    expect(record).toMatchObject({ status: 'queued', version: 1, createdAtMs: SUBMITTED_MS });
    expect(readQueuedState(record.state)).toEqual({
      queued: true,
      input: 'Refund order 42',
      submittedAtMs: SUBMITTED_MS,
    });
    const { agent: support, model } = worker(store);
    const events: string[] = [];
    const result = await support.resume('q1', { onEvent: (event) => events.push(event.type) });
    expect(result).toMatchObject({ status: 'completed', output: 'done', resumable: false });
    expect(events[0]).toBe('run-start');
    expect(model.calls[0]?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Refund order 42' },
    ]);
    const stored = await store.loadRun('q1');
    expect(stored?.status).toBe('completed');
    expect(readQueuedState(stored!.state)).toBeUndefined();
    const state = stored?.state as unknown as RunState;
    expect(state).toMatchObject({ startedAtMs: STARTED_MS, deadlineAtMs: STARTED_MS + 60_000 });
    // Resumed again, it is an ended run: its stored result, nothing called.
    expect(await support.resume('q1')).toMatchObject({ status: 'completed', output: 'done' });
    expect(model.calls).toHaveLength(1);
  });

  it('keeps the tenant and pace priority it was queued with for the run a worker starts; refuses a bad priority', async () => {
    const store = new MemoryRunStore();
    await store.createRun(
      queuedRun({
        runId: 'q9',
        agentName: 'support',
        input: 'Hi',
        nowMs: SUBMITTED_MS,
        tenant: 'acme',
        priority: 4,
      }),
    );
    await worker(store).agent.resume('q9');
    expect((await store.loadRun('q9'))?.state).toMatchObject({ tenant: 'acme', priority: 4 });
    expect(() =>
      queuedRun({ runId: 'q10', agentName: 'support', input: 'Hi', nowMs: SUBMITTED_MS, priority: 11 }),
    ).toThrow('priority must be an integer from -10 to 10; got 11');
  });

  it('takes a conversation as input, like run', async () => {
    const store = new MemoryRunStore();
    const input = [
      { role: 'user' as const, content: 'Hello' },
      { role: 'assistant' as const, content: 'Hi, how can I help?' },
      { role: 'user' as const, content: 'Refund order 42' },
    ];
    await store.createRun(queuedRun({ runId: 'q2', agentName: 'support', input, nowMs: SUBMITTED_MS }));
    const { agent: support, model } = worker(store);
    expect(await support.resume('q2')).toMatchObject({ status: 'completed' });
    expect(model.calls[0]?.messages).toEqual([{ role: 'system', content: 'Be brief.' }, ...input]);
  });

  it('resolves a run cancelled while queued as cancelled, calling nothing', async () => {
    const store = new MemoryRunStore();
    await store.createRun(queuedRun({ runId: 'q3', agentName: 'support', input: 'go', nowMs: SUBMITTED_MS }));
    expect(await store.requestCancellation('q3', 'changed my mind', SUBMITTED_MS + 1)).toBe('cancelled');
    const { agent: support, model } = worker(store);
    const result = await support.resume('q3');
    expect(result).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', resumable: false });
    expect(result.error?.message).toContain('changed my mind');
    expect(model.calls).toHaveLength(0);
  });

  it('resolves as cancelled when the cancellation lands between the load and the first checkpoint', async () => {
    class CancelOnLease extends MemoryRunStore {
      override async acquireLease(
        runId: string,
        owner: string,
        ttlMs: number,
        nowMs: number,
      ): Promise<Lease> {
        const lease = await super.acquireLease(runId, owner, ttlMs, nowMs);
        await this.requestCancellation(runId, 'just now', nowMs);
        return lease;
      }
    }
    const store = new CancelOnLease();
    await store.createRun(queuedRun({ runId: 'q4', agentName: 'support', input: 'go', nowMs: SUBMITTED_MS }));
    const { agent: support, model } = worker(store);
    expect(await support.resume('q4')).toMatchObject({ status: 'cancelled', resumable: false });
    expect(model.calls).toHaveLength(0);
    expect((await store.loadRun('q4'))?.lease).toBeUndefined();
  });

  it('refuses answers for a run that has not started, and another agent than the one named', async () => {
    const store = new MemoryRunStore();
    await store.createRun(queuedRun({ runId: 'q5', agentName: 'billing', input: 'go', nowMs: SUBMITTED_MS }));
    await store.createRun(queuedRun({ runId: 'q6', agentName: 'support', input: 'go', nowMs: SUBMITTED_MS }));
    const { agent: support } = worker(store);
    await expect(support.resume('q5')).rejects.toMatchObject({ code: 'config.invalid' });
    await expect(support.resume('q6', { approvals: { 'q6:1:0': { approved: true } } })).rejects.toMatchObject(
      {
        code: 'config.invalid',
        message: expect.stringContaining('has not started yet'),
      },
    );
    expect((await store.loadRun('q6'))?.status).toBe('queued');
  });

  it('checks what it queues: config.invalid says what to fix', () => {
    const bad = (options: Partial<Parameters<typeof queuedRun>[0]>) => {
      try {
        queuedRun({ runId: 'r', agentName: 'a', input: 'go', nowMs: SUBMITTED_MS, ...options });
      } catch (error) {
        return KeelError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
      }
      return 'accepted';
    };
    expect(bad({ runId: '' })).toMatch(/^config.invalid: queuedRun: runId must be/);
    expect(bad({ agentName: ' ' })).toMatch(/agentName must be a non-empty string/);
    expect(bad({ input: '  ' })).toMatch(/input is empty/);
    expect(bad({ input: [] })).toMatch(/input must be a string, or a non-empty array of messages/);
    expect(bad({ input: [{ role: 'robot', content: 'x' }] as never })).toMatch(
      /input\[0\] must be a message/,
    );
    expect(bad({ nowMs: Number.NaN })).toMatch(/nowMs must be/);
    expect(bad({})).toBe('accepted');
  });
});
