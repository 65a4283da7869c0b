// Agents of two processes (two RedisStates: two connections) pacing against one provider window through Redis, a
// provider that counts what it receives per window and answers 429 beyond its limit; then Redis stopped mid-run (a
// private Redis of the test's own, so that stopping it disturbs no other test).
import { agent, constant, KeelError, type PaceOptions, type RunEvent } from '@keel/core';
import type { PaceStore } from '@keel/core/store';
import { FakeClock, flushMicrotasks, scriptedModel } from '@keel/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisInstance, startRedis } from '../../../../scripts/redis.js';
import { freeLoopbackPort } from '../../../../scripts/test-services.js';
import { type RedisState, redisState } from '../redis-state.js';
import { eventually } from '../test-support/eventually.js';
import { TEST_OPERATION_TIMEOUT_MS, uniqueNamespace } from '../test-support/test-redis.js';

let redis: RedisInstance;
let port: number;
const open: RedisState[] = [];
beforeAll(async () => {
  port = await freeLoopbackPort();
  redis = await startRedis(port);
}, 120_000);
afterAll(async () => {
  await Promise.all(open.map((state) => state.close()));
  await redis.stop();
}, 30_000);

function connect(namespace: string): RedisState {
  const state = redisState({
    url: `redis://127.0.0.1:${port}`,
    namespace,
    recoveryIntervalMs: 50,
    operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
  });
  open.push(state);
  return state;
}

const LIMIT = 4;
const WINDOW_MS = 1_000;

/**
 * A provider's window of `LIMIT` requests per `WINDOW_MS` (fixed windows on the fake clock), shared by every model made
 * from it (one API key): answers carry OpenAI-like headers, and a request beyond the limit is a 429 whose Retry-After
 * is the window's end.
 */
function providerWindow(clock: FakeClock) {
  const sentAtMs: number[] = [];
  let refused = 0;
  const model = () =>
    scriptedModel(() => {
      const nowMs = clock.now();
      const startMs = Math.floor(nowMs / WINDOW_MS) * WINDOW_MS;
      const used = sentAtMs.filter((atMs) => atMs >= startMs).length;
      const resetInMs = startMs + WINDOW_MS - nowMs;
      if (used >= LIMIT) {
        refused++;
        return new KeelError('provider.rate_limited', 'rate limit reached', { retryAfterMs: resetInMs });
      }
      sentAtMs.push(nowMs);
      return {
        content: 'ok',
        rateLimit: {
          requestsLimit: LIMIT,
          requestsRemaining: LIMIT - used - 1,
          requestsResetInMs: resetInMs,
        },
      };
    });
  return {
    model,
    get refused() {
      return refused;
    },
    /** The most requests the provider accepted in one window. */
    busiestWindow(): number {
      const counts = new Map<number, number>();
      for (const atMs of sentAtMs) {
        const window = Math.floor(atMs / WINDOW_MS);
        counts.set(window, (counts.get(window) ?? 0) + 1);
      }
      return Math.max(0, ...counts.values());
    },
  };
}

/** A store whose operations in flight are known, so that the fake clock moves only while none is (Redis is real). */
function tracked(store: PaceStore, pending: Set<Promise<unknown>>): PaceStore {
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    const done = () => pending.delete(promise);
    promise.then(done, done);
    return promise;
  };
  return {
    admit: (request) => track(store.admit(request)),
    observe: (key, snapshot, nowMs) => track(store.observe(key, snapshot, nowMs)),
    refused: (key, retryAfterMs, nowMs) => track(store.refused(key, retryAfterMs, nowMs)),
  };
}

/** Moves the fake clock on, 2 ms at a time and only while no store operation is in flight, until `runs` end. */
async function drive(
  clock: FakeClock,
  runs: Promise<unknown>[],
  pending: Set<Promise<unknown>>,
): Promise<void> {
  let left = runs.length;
  for (const run of runs) void run.finally(() => left--);
  while (left > 0) {
    while (pending.size > 0) {
      await Promise.allSettled([...pending]);
      await flushMicrotasks();
    }
    await clock.advance(2);
    await flushMicrotasks();
  }
}

const retry = { maxAttempts: 10, delay: constant(50), runBudget: { maxRetries: 100, ratio: false as const } };

/** Two agents (two processes) on one provider window, a first run teaching the window, then 6 runs each at once. */
async function twoProcesses(pace: (process: number) => true | PaceOptions, pending: Set<Promise<unknown>>) {
  const clock = new FakeClock(1_000_000);
  const provider = providerWindow(clock);
  const agents = [0, 1].map((process) =>
    agent({ model: provider.model(), clock, pace: pace(process), breaker: false, retry }),
  );
  const first = agents[0]!.run('learn the window');
  await drive(clock, [first], pending);
  const runs = agents.flatMap((assistant) =>
    Array.from({ length: 6 }, (_, index) => assistant.run(`run ${index}`)),
  );
  await drive(clock, runs, pending);
  const results = await Promise.all(runs);
  return {
    completed: results.filter((result) => result.status === 'completed').length,
    refused: provider.refused,
    busiest: provider.busiestWindow(),
  };
}

it('paces two processes against one shared window: no 429, where governors of their own draw them', async () => {
  const namespace = uniqueNamespace('fleet-pace');
  const states = [connect(namespace), connect(namespace)];
  await Promise.all(states.map((state) => state.ready()));
  const pending = new Set<Promise<unknown>>();
  const shared = await twoProcesses(
    (process) => ({ store: tracked(states[process]!.paceStore(), pending), keyName: 'team-key' }),
    pending,
  );
  expect(shared).toEqual({ completed: 12, refused: 0, busiest: LIMIT });
  const local = await twoProcesses(() => true, pending);
  expect(local.completed).toBe(12);
  expect(local.refused).toBeGreaterThan(0);
  console.log(
    `two processes, 12 runs: 429s with the shared window ${shared.refused}, with their own ${local.refused}`,
  );
}, 60_000);

it('paces calls with the process governor while Redis is down (pace-store-unavailable), and shares again after', async () => {
  const namespace = uniqueNamespace('pace-outage');
  const state = connect(namespace);
  await state.ready();
  const pending = new Set<Promise<unknown>>();
  const clock = new FakeClock(1_000_000);
  const provider = providerWindow(clock);
  const events: RunEvent[] = [];
  const assistant = agent({
    model: provider.model(),
    clock,
    pace: { store: tracked(state.paceStore(), pending) },
    breaker: false,
    retry,
    onEvent: (event) => events.push(event),
  });
  const unavailable = () => events.filter((event) => event.type === 'pace-store-unavailable');
  const burst = async (count: number) => {
    const runs = Array.from({ length: count }, (_, index) => assistant.run(`run ${index}`));
    await drive(clock, runs, pending);
    return (await Promise.all(runs)).filter((result) => result.status === 'completed').length;
  };
  expect(await burst(3)).toBe(3);
  expect(unavailable()).toEqual([]);

  await redis.stop();
  await eventually(() => state.status === 'unavailable', 'the state to see Redis gone', 10_000);
  // The process's governor learnt the window from every answer: it goes on pacing, alone, with no 429.
  expect(await burst(6)).toBe(6);
  expect(unavailable().length).toBeGreaterThanOrEqual(6);
  expect(unavailable()[0]).toMatchObject({ model: 'scripted/scripted', errorCode: 'store.unavailable' });
  expect(provider.refused).toBe(0);

  redis = await startRedis(port);
  await state.ready();
  const before = unavailable().length;
  expect(await burst(3)).toBe(3);
  expect(unavailable().length).toBe(before);
  expect(provider.refused).toBe(0);
  expect(provider.busiestWindow()).toBeLessThanOrEqual(LIMIT);
}, 120_000);

it("holds back the other process's calls for a 429's Retry-After, without drawing on its retries", async () => {
  const namespace = uniqueNamespace('pace-refused');
  const states = [connect(namespace), connect(namespace)];
  await Promise.all(states.map((state) => state.ready()));
  const pending = new Set<Promise<unknown>>();
  const clock = new FakeClock(1_000_000);
  const sentAtMs: number[] = [];
  // The provider sends no rate-limit headers; its first answer is a 429 asking for 500 ms.
  const model = () =>
    scriptedModel(() => {
      sentAtMs.push(clock.now());
      return sentAtMs.length === 1
        ? new KeelError('provider.rate_limited', 'slow down', { retryAfterMs: 500 })
        : { content: 'ok' };
    });
  const [one, two] = states.map((state) =>
    agent({
      model: model(),
      clock,
      pace: { store: tracked(state.paceStore(), pending) },
      breaker: false,
      retry: { maxAttempts: 1 },
    }),
  );
  const refused = one!.run('first');
  await drive(clock, [refused], pending);
  expect((await refused).error?.code).toBe('provider.rate_limited');
  const second = two!.run('second');
  await drive(clock, [second], pending);
  const result = await second;
  expect(result.status).toBe('completed');
  // The second process sent its call when the Retry-After the first one was given ended, not before (the driver moves
  // the clock 2 ms at a time while Redis answers, so the send lands on the first step at or after the end).
  expect(sentAtMs).toHaveLength(2);
  expect(sentAtMs[1]! - sentAtMs[0]!).toBeGreaterThanOrEqual(500);
  expect(sentAtMs[1]! - sentAtMs[0]!).toBeLessThanOrEqual(504);
  expect(result.report.retries.total).toBe(0);
}, 60_000);
