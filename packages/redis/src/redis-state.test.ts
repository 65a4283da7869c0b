// redisState itself: option checks, connecting through an existing client, a server that never answers, closing.
import { circuitBreaker, type KeelError, rateLimiter, retryBudget, systemClock } from '@keel/core';
import { closedPort } from '@keel/core/testing';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisUnavailableEvent } from './redis-events.js';
import { redisState } from './redis-state.js';
import { eventually } from './test-support/eventually.js';
import {
  TEST_OPERATION_TIMEOUT_MS,
  testClient,
  testRedisUrl,
  uniqueNamespace,
} from './test-support/test-redis.js';

describe('redisState: options', () => {
  it.each([
    [
      {},
      /redisState: url must be a Redis URL such as redis:\/\/127.0.0.1:6379 \(or give client\), got undefined/,
    ],
    [{ url: 'http://localhost' }, /url must be a Redis URL/],
    [{ url: 'redis://x', client: {} }, /client must be an ioredis client, got a object/],
    [{ client: new Redis({ lazyConnect: true }), url: 'redis://x' }, /give either url or client, not both/],
    [
      { url: 'redis://x', namespace: 'a:b' },
      /namespace must be a non-empty string without whitespace, colon/,
    ],
    [{ url: 'redis://x', namespace: '' }, /namespace must be a non-empty string/],
    [
      { url: 'redis://x', operationTimeoutMs: 0 },
      /operationTimeoutMs must be an integer number of milliseconds from 1/,
    ],
    [{ url: 'redis://x', recoveryIntervalMs: 1.5 }, /recoveryIntervalMs must be an integer/],
    [
      { url: 'redis://x', operationTimeoutMs: 200, unavailableAfterMs: 100 },
      /unavailableAfterMs must be an integer number of milliseconds from 200/,
    ],
    [
      { url: 'redis://x', probeSlotTtlMs: 100 },
      /probeSlotTtlMs must be an integer number of milliseconds from 300/,
    ],
    [{ url: 'redis://x', connectTimeoutMs: -1 }, /connectTimeoutMs must be an integer/],
    [{ url: 'redis://x', ttlMs: 10 }, /ttlMs must be an integer number of milliseconds from 1000/],
    [{ url: 'redis://x', onUnavailable: 'open' }, /onUnavailable must be 'local' or 'closed', got "open"/],
    [{ url: 'redis://x', timeSource: 'local' }, /timeSource must be 'redis' or 'clock', got "local"/],
    [{ url: 'redis://x', clock: { now: () => 0 } }, /clock must be a Clock/],
    [{ url: 'redis://x', namespce: 'a' }, /Unknown redisState option namespce .*did you mean namespace\?/],
    ['redis://x', /redisState: options must be an object/],
  ])('refuses %j with config.invalid', (options, message) => {
    let error: KeelError | undefined;
    try {
      redisState(options as never);
    } catch (caught) {
      error = caught as KeelError;
    }
    expect(error?.code).toBe('config.invalid');
    expect(error?.message).toMatch(message);
  });
});

describe('redisState: connections', () => {
  it("connects with an existing client's settings, leaving that client alone", async () => {
    const client = testClient();
    const state = redisState({
      client,
      namespace: uniqueNamespace('state'),
      operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
    });
    expect(state.status).toBe('connecting');
    await state.ready();
    expect(state.status).toBe('available');
    const limiter = rateLimiter({ ratePerSecond: 5, store: state.rateLimiterStore({ name: 'api' }) });
    await limiter.execute(() => 'x');
    expect(await client.exists(`keel:${state.namespace}:rate-limiter:api`)).toBe(1);
    await state.close();
    expect(state.status).toBe('closed');
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  it('says so when Redis never answers, and policies follow their rule meanwhile', async () => {
    const state = redisState({
      url: `redis://127.0.0.1:${await closedPort()}`,
      connectTimeoutMs: 300,
      recoveryIntervalMs: 100,
      clock: systemClock,
    });
    const unavailable = new Promise<RedisUnavailableEvent>((resolve) => state.onUnavailable(resolve));
    const failure = await state.ready().catch((error: KeelError) => error);
    expect(failure).toMatchObject({ code: 'store.unavailable', data: { namespace: 'default' } });
    expect((failure as KeelError).message).toMatch(/did not answer within 300 ms \(connectTimeoutMs\)/);
    const event = await unavailable;
    expect(event.error.code).toBe('store.unavailable');
    expect(event.error.message).toMatch(/Redis at 127\.0\.0\.1:\d+ is unavailable: .*ECONNREFUSED/);
    expect(state.status).toBe('unavailable');
    // 'local' by default: a breaker runs on its own state.
    const breaker = circuitBreaker({ store: state.breakerStore() });
    await expect(breaker.execute(() => 'local')).resolves.toBe('local');
    const budget = retryBudget({
      store: state.retryBudgetStore({ name: 'models', onUnavailable: 'closed' }),
    });
    expect(budget.tryAcquireRetry()).toBe(false);
    await state.close();
  });

  it('keys rate limiters and budgets under their kind and name, and budgets expire', async () => {
    const state = redisState({
      url: testRedisUrl(),
      namespace: uniqueNamespace('state'),
      ttlMs: 60_000,
      operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
    });
    await state.ready();
    const budget = retryBudget({ store: state.retryBudgetStore({ name: 'models' }) });
    budget.recordRequest();
    const client = testClient();
    const key = `keel:${state.namespace}:retry-budget:models`;
    await eventually(async () => (await client.exists(key)) === 1, 'the budget to reach Redis');
    expect(await client.pttl(key)).toBeGreaterThan(50_000);
    await client.quit();
    await state.close();
  });
});
