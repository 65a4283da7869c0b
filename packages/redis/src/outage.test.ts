// Redis stops in the middle of agent runs and comes back. The test runs a private Redis of its own (scripts/redis.ts),
// so that stopping it disturbs no other test. Two RedisStates stand for two processes of a fleet.
import {
  agent,
  type BreakerTransition,
  circuitBreaker,
  consecutive,
  KeelError,
  type RetryBudgetDeniedEvent,
  rateLimiter,
  retryBudget,
} from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RedisInstance, startRedis } from '../../../scripts/redis.js';
import { freeLoopbackPort } from '../../../scripts/test-services.js';
import { type RedisState, redisState } from './redis-state.js';
import { TEST_OPERATION_TIMEOUT_MS, testClient, uniqueNamespace } from './test-support/test-redis.js';

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

/** Resolves with the next event of `event`. */
function next<T>(event: (listener: (value: T) => void) => { dispose(): void }): Promise<T> {
  return new Promise((resolve) => {
    const subscription = event((value) => {
      subscription.dispose();
      resolve(value);
    });
  });
}

it("goes on by each policy's rule while Redis is down, says so, and takes the shared state back when it returns", async () => {
  const url = `redis://127.0.0.1:${port}`;
  const namespace = uniqueNamespace('outage');
  const connect = () => {
    const state = redisState({
      url,
      namespace,
      recoveryIntervalMs: 50,
      operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
    });
    open.push(state);
    return state;
  };
  const a = connect();
  const b = connect();
  await Promise.all([a.ready(), b.ready()]);
  const events: string[] = [];
  for (const [name, state] of [
    ['a', a],
    ['b', b],
  ] as const) {
    state.onUnavailable(({ error }) => events.push(`${name} unavailable: ${error.code}`));
    state.onRecovered(({ unavailableForMs }) =>
      events.push(`${name} recovered after ${unavailableForMs > 0}`),
    );
  }

  let modelDown = false;
  const modelCalls = { a: 0, b: 0 };
  const assistant = (state: RedisState, process: 'a' | 'b') =>
    agent({
      model: scriptedModel(
        () => {
          modelCalls[process]++;
          if (modelDown) throw new KeelError('provider.server_error', 'upstream 503');
          return { content: 'done' };
        },
        { provider: 'sim', model: 'm1' },
      ),
      retry: {
        maxAttempts: 1,
        budget: retryBudget({ ratio: 0.5, store: state.retryBudgetStore({ name: 'models' }) }),
      },
      breaker: {
        strategy: consecutive({ threshold: 2 }),
        halfOpenAfterMs: 60_000,
        store: state.breakerStore(),
      },
    });
  const agentA = assistant(a, 'a');
  const agentB = assistant(b, 'b');
  const direct = circuitBreaker({
    name: 'direct',
    strategy: consecutive({ threshold: 1 }),
    store: a.breakerStore(),
  });
  const directMoves: BreakerTransition[] = [];
  direct.onStateChange((transition) => directMoves.push(transition));
  expect((await agentA.run('before')).status).toBe('completed');
  expect((await agentB.run('before')).status).toBe('completed');

  // Redis stops: both processes notice and say so.
  const bothDown = Promise.all([next(a.onUnavailable), next(b.onUnavailable)]);
  await redis.stop();
  await bothDown;
  expect([a.status, b.status]).toEqual(['unavailable', 'unavailable']);

  // 'local' (the default): runs go on, each process on its own state.
  for (let run = 0; run < 3; run++) expect((await agentA.run(`during ${run}`)).status).toBe('completed');
  modelDown = true;
  await agentA.run('failing 1');
  const secondFailure = await agentA.run('failing 2');
  expect(secondFailure.report.breakerTransitions.map(({ to }) => to)).toEqual(['open']);
  const refused = await agentA.run('refused locally');
  expect(refused.error?.code).toBe('policy.circuit_open');
  expect(modelCalls.a).toBe(1 + 3 + 2);
  // b's breaker is b's own meanwhile: a's open breaker does not reach it.
  await agentB.run('b still calls');
  expect(modelCalls.b).toBe(2);
  await expect(direct.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(direct.state).toBe('open');
  const lenient = rateLimiter({ ratePerSecond: 100, store: a.rateLimiterStore({ name: 'lenient' }) });
  await expect(lenient.execute(() => 'limited locally')).resolves.toBe('limited locally');

  // 'closed': calls are refused, with Redis's unavailability as the cause.
  const strict = circuitBreaker({ name: 'strict', store: b.breakerStore({ onUnavailable: 'closed' }) });
  const strictRefusal = await strict.execute(() => 'never').catch((error: KeelError) => error);
  expect(strictRefusal).toMatchObject({ code: 'policy.circuit_open', cause: { code: 'store.unavailable' } });
  const strictLimiter = rateLimiter({
    ratePerSecond: 100,
    store: b.rateLimiterStore({ name: 'strict', onUnavailable: 'closed' }),
  });
  await expect(strictLimiter.execute(() => 'never')).rejects.toMatchObject({
    code: 'policy.rate_limited',
    retryAfterMs: 50,
    cause: { code: 'store.unavailable' },
  });
  const strictBudget = retryBudget({
    store: b.retryBudgetStore({ name: 'strict', onUnavailable: 'closed' }),
  });
  const denials: RetryBudgetDeniedEvent[] = [];
  strictBudget.onRetryDenied((denial) => denials.push(denial));
  expect(strictBudget.tryAcquireRetry()).toBe(false);
  expect(denials.map(({ reason }) => reason)).toEqual(['unavailable']);

  // Redis comes back (empty: it keeps nothing on disk): both processes take the shared state back.
  const bothBack = Promise.all([next(a.onRecovered), next(b.onRecovered)]);
  redis = await startRedis(port);
  await bothBack;
  expect(events.sort()).toEqual([
    'a recovered after true',
    'a unavailable: store.unavailable',
    'b recovered after true',
    'b unavailable: store.unavailable',
  ]);
  // The direct breaker opened on its own during the outage; the fleet's state (closed) wins, and a move says so.
  expect(directMoves.at(-1)).toMatchObject({ from: 'open', to: 'closed', reason: 'synchronized' });
  expect(direct.state).toBe('closed');
  await expect(strict.execute(() => 'allowed again')).resolves.toBe('allowed again');

  // Shared again: a's failures open the fleet's breaker, and b stops calling the model without a call of its own.
  // A breaker of the same name in b hears the fleet's moves by the same message as the agent's breaker in b.
  const watcher = circuitBreaker({
    name: 'sim/m1',
    strategy: consecutive({ threshold: 2 }),
    halfOpenAfterMs: 60_000,
    store: b.breakerStore(),
  });
  const bHears = next(watcher.onBreak);
  await agentA.run('failing again 1');
  await agentA.run('failing again 2');
  const client = testClient(url);
  expect(await client.hget(`keel:${namespace}:breaker:sim/m1`, 'state')).toBe('open');
  await client.quit();
  expect(await bHears).toMatchObject({ from: 'closed', to: 'open', reason: 'failure-threshold' });
  const callsBefore = modelCalls.b;
  const bRefused = await agentB.run('b after the fleet opened');
  expect(bRefused.error?.code).toBe('policy.circuit_open');
  expect(modelCalls.b).toBe(callsBefore);
});

it('tells a slow Redis from a lost one: a pause shorter than unavailableAfterMs is no outage, a longer one is', async () => {
  const url = `redis://127.0.0.1:${port}`;
  const namespace = uniqueNamespace('pause');
  const state = redisState({
    url,
    namespace,
    recoveryIntervalMs: 50,
    operationTimeoutMs: 50,
    unavailableAfterMs: 3_000,
  });
  open.push(state);
  await state.ready();
  const events: string[] = [];
  state.onUnavailable(() => events.push('unavailable'));
  state.onRecovered(() => events.push('recovered'));
  const breaker = circuitBreaker({
    name: 'provider',
    strategy: consecutive({ threshold: 1 }),
    halfOpenAfterMs: 1,
    probeTimeoutMs: 120_000,
    store: state.breakerStore(),
  });
  await breaker.execute(() => 'warm-up');
  await expect(
    breaker.execute(() => {
      throw new KeelError('provider.server_error', 'upstream 503');
    }),
  ).rejects.toThrow('upstream 503');
  const pauser = testClient(url);
  const client = testClient(url);
  const key = `keel:${namespace}:breaker:provider`;
  try {
    // Redis holds every command for 500 ms (as a busy or briefly stalled server would), ten times the operation
    // timeout: the half-open admission times out here though Redis runs it and gives it the fleet's only slot.
    await pauser.call('CLIENT', 'PAUSE', '500', 'ALL');
    const refused = await breaker.execute(() => 'probe').catch((error: KeelError) => error);
    expect(refused).toMatchObject({ code: 'policy.circuit_open', data: { state: 'half-open' } });
    // The late answer gives the slot back, and the PING answered: Redis was slow, not lost.
    for (;;) {
      const probes = await client.hget(key, 'probes');
      if (probes === '{}' || probes === '[]') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(state.status).toBe('available');
    await expect(breaker.execute(() => 'probe')).resolves.toBe('probe');
    expect(breaker.state).toBe('closed');
    expect(events).toEqual([]);

    // A Redis that answers nothing for longer than unavailableAfterMs is unavailable before it answers again.
    const lost = redisState({
      url,
      namespace,
      recoveryIntervalMs: 50,
      operationTimeoutMs: 50,
      unavailableAfterMs: 200,
    });
    open.push(lost);
    await lost.ready();
    const unavailable = next(lost.onUnavailable);
    const recovered = next(lost.onRecovered);
    const limiter = rateLimiter({ ratePerSecond: 100, store: lost.rateLimiterStore({ name: 'api' }) });
    const pausedAtMs = Date.now();
    await pauser.call('CLIENT', 'PAUSE', '2000', 'ALL');
    await expect(limiter.execute(() => 'local')).resolves.toBe('local');
    const event = await unavailable;
    expect(event.error.message).toMatch(/did not answer a PING within 200 ms \(unavailableAfterMs\)/);
    // Within operationTimeoutMs + unavailableAfterMs of the first operation that met it: well before the pause ends.
    expect(event.atMs - pausedAtMs).toBeLessThan(2_000);
    // The pause ends: Redis answers again, and the state is shared again.
    await recovered;
  } finally {
    await pauser.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    pauser.disconnect();
    client.disconnect();
  }
});
