import { agent, MemoryRunStore, queuedRun, type RunStore, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FleetFixture } from './fleet-fixture.js';
import { jobIdOf, queueNameOf } from './fleet-names.js';
import { runWorker } from './run-worker.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');

/** Holds calls of a tool open until a test lets them go, and logs each effect. */
class Effects {
  readonly done: string[] = [];
  readonly signals = new Map<string, AbortSignal>();
  private readonly open = new Map<string, () => void>();
  private readonly waiters: Array<() => void> = [];

  /** Resolves once a call of `key` waits to be let go. */
  async entered(key: string): Promise<void> {
    while (!this.open.has(key)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(key: string): void {
    this.open.get(key)?.();
  }

  /** A tool named `name`, not idempotent, whose calls wait to be let go (or for their signal) before the effect. */
  tool(name: string, options: { needsApproval?: boolean; hold?: boolean } = {}) {
    return tool({
      name,
      description: `${name} (a side effect)`,
      input: { type: 'object', properties: {} } as const,
      needsApproval: options.needsApproval ?? false,
      timeoutMs: 60_000,
      execute: async (_input, context) => {
        this.signals.set(context.idempotencyKey, context.signal);
        if (options.hold !== false) {
          await new Promise<void>((resolve, reject) => {
            this.open.set(context.idempotencyKey, resolve);
            context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
            for (const wake of this.waiters.splice(0)) wake();
          });
        }
        this.done.push(context.idempotencyKey);
        return 'done';
      },
    });
  }
}

/** An agent that calls `toolName` once, then answers `finished`. */
function oneCallAgent(
  name: string,
  store: RunStore,
  effectTool: ReturnType<Effects['tool']>,
  owner?: string,
) {
  return agent({
    name,
    model: scriptedModel((request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { content: 'finished' }
        : { toolCalls: [{ name: effectTool.name }] },
    ),
    tools: [effectTool],
    store,
    durability: { leaseTtlMs: 2_000, ...(owner === undefined ? {} : { owner }) },
  });
}

let fixture: FleetFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('runWorker', () => {
  it('takes a submitted run, starts it and finishes it, saying so', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    fixture.worker([oneCallAgent('desk', store, effects.tool('open_ticket', { hold: false }))]);
    const { runId } = await fixture.queue.submit('desk', 'open a ticket');
    const finished = await fixture.finished(runId);
    expect(finished).toMatchObject({ status: 'completed', stopReason: 'final_answer', agentName: 'desk' });
    expect(fixture.eventsOf(runId)).toEqual(['run-taken', 'run-started', 'run-finished']);
    expect(effects.done).toEqual([`${runId}:1:0`]);
    expect(await store.loadRun(runId)).toMatchObject({ status: 'completed' });
    expect((await store.loadRun(runId))?.lease).toBeUndefined();
  });

  it('takes only runs of its own agents: a run of another agent waits for a worker that has it', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    fixture.worker([oneCallAgent('desk', store, effects.tool('open_ticket', { hold: false }))]);
    const other = await fixture.queue.submit('billing', 'refund');
    const mine = await fixture.queue.submit('desk', 'open a ticket');
    await fixture.finished(mine.runId);
    expect((await store.loadRun(other.runId))?.status).toBe('queued');
    fixture.worker([oneCallAgent('billing', store, effects.tool('refund', { hold: false }))]);
    expect(await fixture.finished(other.runId)).toMatchObject({ status: 'completed', worker: 1 });
  });

  it('lists a running run with the worker that holds it', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    fixture.worker([oneCallAgent('desk', store, effects.tool('open_ticket'), 'worker-7')]);
    const { runId } = await fixture.queue.submit('desk', 'open a ticket');
    await effects.entered(`${runId}:1:0`);
    const listed = (await store.listRuns({ status: 'running' })).find((run) => run.runId === runId);
    expect(listed?.lease?.owner).toBe('worker-7');
    effects.release(`${runId}:1:0`);
    await fixture.finished(runId);
  });

  it('routes a cancellation to the worker that holds the run: its running call is aborted at once', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    fixture.worker([oneCallAgent('desk', store, effects.tool('open_ticket'))]);
    const { runId } = await fixture.queue.submit('desk', 'open a ticket');
    const key = `${runId}:1:0`;
    await effects.entered(key);
    // The call never returns by itself: only the message through Redis can end the run now.
    expect(await fixture.queue.cancel(runId, 'customer hung up')).toBe('running');
    const finished = await fixture.finished(runId);
    expect(finished).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    expect(effects.signals.get(key)?.aborted).toBe(true);
    expect(effects.done).toEqual([]);
    expect(await store.loadRun(runId)).toMatchObject({
      status: 'cancelled',
      cancellation: { reason: 'customer hung up' },
    });
  });

  it('routes approvals through the queue: the interrupted run is resumed by a worker with the answers', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    const desk = oneCallAgent('desk', store, effects.tool('refund', { needsApproval: true, hold: false }));
    fixture.worker([desk]);
    fixture.worker([desk]);
    const { runId } = await fixture.queue.submit('desk', 'refund order 42');
    const waiting = await fixture.finished(runId);
    expect(waiting).toMatchObject({ status: 'interrupted', stopReason: 'approval_required' });
    expect(effects.done).toEqual([]);
    await fixture.queue.answer(runId, { approvals: { [`${runId}:1:0`]: { approved: true } } });
    const done = await fixture.event(
      (event) => event.type === 'run-finished' && event.runId === runId && event.status === 'completed',
    );
    expect(done).toMatchObject({ status: 'completed' });
    expect(fixture.eventsOf(runId)).toEqual([
      'run-taken',
      'run-started',
      'run-finished',
      'run-taken',
      'run-resumed',
      'run-finished',
    ]);
    expect(effects.done).toEqual([`${runId}:1:0`]);
  });

  it('shuts down gracefully: the running call finishes and is saved, the run goes back to the queue, another worker ends it', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    const twoCalls = agent({
      name: 'desk',
      model: scriptedModel((request) => {
        const results = request.messages.filter((message) => message.role === 'tool').length;
        return results < 2 ? { toolCalls: [{ name: 'open_ticket' }] } : { content: 'finished' };
      }),
      tools: [effects.tool('open_ticket')],
      store,
      durability: { leaseTtlMs: 2_000 },
    });
    const first = fixture.worker([twoCalls]);
    const { runId } = await fixture.queue.submit('desk', 'open two tickets');
    await effects.entered(`${runId}:1:0`);
    const closing = first.close();
    effects.release(`${runId}:1:0`);
    await closing;
    expect(fixture.eventsOf(runId)).toEqual(['run-taken', 'run-started', 'run-requeued']);
    expect(fixture.events.find((event) => event.type === 'run-requeued')).toMatchObject({
      reason: 'paused',
      delayMs: 0,
    });
    expect(effects.done).toEqual([`${runId}:1:0`]);
    const paused = await store.loadRun(runId);
    expect(paused).toMatchObject({ status: 'running' });
    expect(paused?.lease).toBeUndefined();
    expect((await store.ledger(runId)).map((entry) => entry.status)).toEqual(['completed']);

    fixture.worker([twoCalls]);
    await effects.entered(`${runId}:2:0`);
    effects.release(`${runId}:2:0`);
    expect(await fixture.finished(runId)).toMatchObject({ status: 'completed', worker: 1 });
    expect(effects.done).toEqual([`${runId}:1:0`, `${runId}:2:0`]);
  });

  it('hands a run whose lease another process holds back to the queue until that lease ends', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    const { runId } = await fixture.queue.submit('desk', 'open a ticket');
    // A worker that died holding the run: its lease runs for 400 ms more.
    await store.acquireLease(runId, 'dead-worker', 400, Date.now());
    fixture.worker([oneCallAgent('desk', store, effects.tool('open_ticket', { hold: false }))]);
    const finished = await fixture.finished(runId);
    expect(finished.status).toBe('completed');
    const requeued = fixture.events.find((event) => event.type === 'run-requeued');
    expect(requeued).toMatchObject({ reason: 'lease_held' });
    expect((requeued as { delayMs: number }).delayMs).toBeGreaterThan(0);
    expect((requeued as { delayMs: number }).delayMs).toBeLessThanOrEqual(450);
    expect(effects.done).toEqual([`${runId}:1:0`]);
  });

  it('sweeps the store for runs no job carries and enqueues them once', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    // Stored while Redis was away: no job carries it.
    await store.createRun(
      queuedRun({ runId: 'orphan', agentName: 'desk', input: 'go', nowMs: Date.now() - 60_000 }),
    );
    const worker = fixture.worker([
      oneCallAgent('desk', store, effects.tool('open_ticket', { hold: false })),
    ]);
    const [first, second] = await Promise.all([worker.sweep(), worker.sweep()]);
    expect([...first!, ...second!]).toContain('orphan');
    expect(await fixture.finished('orphan')).toMatchObject({ status: 'completed' });
    expect(await worker.sweep()).toEqual([]);
    expect(effects.done).toEqual(['orphan:1:0']);
  });

  it('runs and sweeps runs whose ids BullMQ refuses as job ids (integers, ids with ":")', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const effects = new Effects();
    const desk = oneCallAgent('desk', store, effects.tool('open_ticket', { hold: false }));
    expect(await fixture.queue.submit('desk', 'go', { runId: '42' })).toEqual({
      runId: '42',
      enqueued: true,
    });
    expect((await fixture.queue.submit('desk', 'go', { runId: 'order:7' })).enqueued).toBe(true);
    for (const runId of ['7', 'a:b', 'orphan']) {
      await store.createRun(queuedRun({ runId, agentName: 'desk', input: 'go', nowMs: Date.now() - 60_000 }));
    }
    const worker = fixture.worker([desk]);
    expect((await worker.sweep()).sort()).toEqual(['7', 'a:b', 'orphan']);
    for (const runId of ['42', 'order:7', '7', 'a:b', 'orphan']) {
      expect(await fixture.finished(runId)).toMatchObject({ status: 'completed' });
    }
    expect(effects.done.sort()).toEqual(['42:1:0', '7:1:0', 'a:b:1:0', 'order:7:1:0', 'orphan:1:0']);
  });

  it('sweeps an orphaned run however many newer runs of other agents the store holds', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    const nowMs = Date.now();
    await store.createRun(
      queuedRun({ runId: 'lost', agentName: 'desk', input: 'go', nowMs: nowMs - 600_000 }),
    );
    // 1_100 newer queued runs of an agent no worker serves: more than one listing of the sweep holds.
    for (let index = 0; index < 1_100; index++) {
      const run = queuedRun({
        runId: `b-${index}`,
        agentName: 'billing',
        input: 'go',
        nowMs: nowMs - 300_000 + index,
      });
      await store.createRun(run);
    }
    const worker = fixture.worker([
      oneCallAgent('desk', store, new Effects().tool('open_ticket', { hold: false })),
    ]);
    expect(await worker.sweep()).toEqual(['lost']);
    expect(await fixture.finished('lost')).toMatchObject({ status: 'completed' });
  });

  it('goes on sweeping past a run it cannot enqueue, reporting that run', async () => {
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redisUrl!);
    for (const runId of ['broken', 'fine']) {
      await store.createRun(queuedRun({ runId, agentName: 'desk', input: 'go', nowMs: Date.now() - 60_000 }));
    }
    // The job key of "broken" holds a string: Redis answers WRONGTYPE to BullMQ's look-up.
    const redis = new Redis(redisUrl!);
    try {
      await redis.set(`${fixture.prefix}:${queueNameOf('desk')}:${jobIdOf('broken')}`, 'not a job');
      const worker = fixture.worker([
        oneCallAgent('desk', store, new Effects().tool('open_ticket', { hold: false })),
      ]);
      expect(await worker.sweep()).toEqual(['fine']);
      expect(await fixture.finished('fine')).toMatchObject({ status: 'completed' });
      const failure = fixture.events.find((event) => event.type === 'worker-error');
      expect(failure).toMatchObject({ runId: 'broken', error: { code: 'store.unavailable' } });
    } finally {
      redis.disconnect();
    }
  });

  it('refuses an ioredis client of the caller without maxRetriesPerRequest: null, naming redis', () => {
    const store = new MemoryRunStore();
    const client = new Redis(redisUrl!, { lazyConnect: true });
    try {
      const desk = oneCallAgent('desk', store, new Effects().tool('x'));
      expect(() => runWorker({ agents: [desk], store, redis: client })).toThrow(
        /runWorker: redis: the ioredis client passed in must have maxRetriesPerRequest: null/,
      );
    } finally {
      client.disconnect();
    }
  });

  it('closes what it built when BullMQ refuses a part of it', async () => {
    const store = new MemoryRunStore();
    const client = new Redis(redisUrl!, { maxRetriesPerRequest: null });
    const duplicates: Redis[] = [];
    try {
      // Redis takes one more connection, not two: the second agent's BullMQ worker cannot get its own.
      const duplicate = client.duplicate.bind(client);
      client.duplicate = (...options: Parameters<Redis['duplicate']>) => {
        if (duplicates.length === 1) throw new Error('max number of clients reached');
        const opened = duplicate(...options);
        duplicates.push(opened);
        return opened;
      };
      const effects = new Effects();
      const agents = ['desk', 'billing'].map((name) => oneCallAgent(name, store, effects.tool('x')));
      expect(() => runWorker({ agents, store, redis: client })).toThrow(/max number of clients/);
      // The first agent's worker, built before the failure, is closed with its connection.
      expect(duplicates).toHaveLength(1);
      await vi.waitFor(() => expect(duplicates[0]!.status).toBe('end'));
      expect(await client.ping()).toBe('PONG');
    } finally {
      for (const opened of duplicates) opened.disconnect();
      client.disconnect();
    }
  });

  it('checks its options: config.invalid names the problem', () => {
    const store = new MemoryRunStore();
    const desk = oneCallAgent('desk', store, new Effects().tool('x'));
    const make = (options: Record<string, unknown>) => () =>
      runWorker({ agents: [desk], store, redis: redisUrl!, ...options } as never);
    expect(make({ agents: [] })).toThrow(/agents must be a non-empty array/);
    const plain = agent({ name: 'plain', model: scriptedModel(() => ({ content: 'ok' })) });
    expect(make({ agents: [plain] })).toThrow(/agent "plain" has no store/);
    const elsewhere = oneCallAgent('elsewhere', new MemoryRunStore(), new Effects().tool('x'));
    expect(make({ agents: [elsewhere] })).toThrow(/agent "elsewhere" is durable on another store/);
    expect(make({ agents: [desk, desk] })).toThrow(/two agents are named "desk"/);
    expect(make({ concurrency: 0 })).toThrow(/concurrency must be an integer >= 1, got 0/);
    expect(make({ concurency: 2 })).toThrow(/did you mean concurrency/);
    expect(make({ redis: 'localhost:6379' })).toThrow(/redis must be a redis:\/\/ URL/);
  });
});
