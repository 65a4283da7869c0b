// Shutting down while Redis is down: a private Redis of the test's own (scripts/redis.ts) is stopped under a worker
// with a run in progress and under a producer.
import { agent, MemoryRunStore, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type RedisInstance, startRedis } from '../../../scripts/redis.js';
import { freeLoopbackPort } from '../../../scripts/test-services.js';
import { FleetFixture } from './fleet-fixture.js';
import { runQueue } from './run-queue.js';

let redis: RedisInstance | undefined;
let fixture: FleetFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  await redis?.stop();
  redis = undefined;
}, 30_000);

/** An agent whose one tool call waits until `release` is called, then answers `finished`. */
function heldAgent(store: MemoryRunStore) {
  let release: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const held = tool({
    name: 'open_ticket',
    description: 'opens a ticket',
    input: { type: 'object', properties: {} } as const,
    timeoutMs: 60_000,
    execute: async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
        entered();
      });
      return 'done';
    },
  });
  const desk = agent({
    name: 'desk',
    model: scriptedModel((request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { content: 'finished' }
        : { toolCalls: [{ name: 'open_ticket' }] },
    ),
    tools: [held],
    store,
    durability: { leaseTtlMs: 60_000 },
  });
  return { desk, started, release: () => release() };
}

describe('closing while Redis is down', () => {
  it('a worker pauses its run in progress, frees its lease in the store, and close settles', async () => {
    redis = await startRedis(await freeLoopbackPort());
    const store = new MemoryRunStore();
    fixture = new FleetFixture(store, redis.url, { enqueueTimeoutMs: 200, closeTimeoutMs: 200 });
    const { desk, started, release } = heldAgent(store);
    const worker = fixture.worker([desk], { closeTimeoutMs: 200 });
    const { runId } = await fixture.queue.submit('desk', 'open a ticket');
    await started;
    await redis.stop();
    redis = undefined;
    const closing = worker.close();
    release();
    await closing;
    const paused = await store.loadRun(runId);
    expect(paused).toMatchObject({ status: 'running' });
    expect(paused?.lease).toBeUndefined();
    expect((await store.ledger(runId)).map((entry) => entry.status)).toEqual(['completed']);
  }, 10_000);

  it('a producer cancels (the store has the request) and closes, its Redis failures reported, not printed', async () => {
    const printed = vi.spyOn(console, 'error');
    redis = await startRedis(await freeLoopbackPort());
    const store = new MemoryRunStore();
    const failures: string[] = [];
    const queue = runQueue({
      store,
      redis: redis.url,
      prefix: 'closing',
      enqueueTimeoutMs: 200,
      closeTimeoutMs: 200,
      onError: (error) => failures.push(error.code),
    });
    await queue.submit('desk', 'go', { runId: 'held' });
    // A worker elsewhere runs it: the cancellation is published for that worker.
    await store.acquireLease('held', 'worker-1', 60_000, Date.now());
    await store.saveCheckpoint('held', {
      expectedVersion: 1,
      owner: 'worker-1',
      status: 'running',
      schemaVersion: 3,
      state: {},
      nowMs: Date.now(),
    });
    await redis.stop();
    redis = undefined;
    expect(await queue.cancel('held', 'not needed')).toBe('running');
    expect((await store.loadRun('held'))?.cancellation).toMatchObject({ reason: 'not needed' });
    await queue.close();
    expect(failures.length).toBeGreaterThan(0);
    const unhandled = printed.mock.calls.filter((call) => String(call[0]).includes('Unhandled error event'));
    printed.mockRestore();
    expect(unhandled).toEqual([]);
  }, 10_000);
});
