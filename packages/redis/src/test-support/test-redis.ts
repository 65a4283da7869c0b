// Test helpers: the private Redis the vitest global setup starts, and names no other test file uses.
import { randomUUID } from 'node:crypto';
import type { Clock } from '@keel/core';
import { Redis } from 'ioredis';
import { type RedisState, redisState } from '../redis-state.js';

/**
 * The operation timeout of the tests' states: generous, because a machine running the whole suite can stall a
 * process for more than the default 100 ms, and a state that times out goes local by design (the outage test covers
 * that). These tests are about shared state.
 */
export const TEST_OPERATION_TIMEOUT_MS = 2_000;

/** The URL of the tests' Redis (KEEL_TEST_REDIS_URL, set by the global setup). */
export function testRedisUrl(): string {
  const url = process.env.KEEL_TEST_REDIS_URL;
  if (url === undefined) throw new Error('KEEL_TEST_REDIS_URL is not set: run the tests through vitest');
  return url;
}

/** A namespace of its own for one test, so that test files running at once never share keys. */
export function uniqueNamespace(prefix = 'test'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A plain ioredis client on the tests' Redis (or `url`), for looking at keys and running scripts directly. */
export function testClient(url = testRedisUrl()): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1 });
}

/**
 * A state on the tests' Redis standing for one process, its scripts timed by `clock` (`timeSource: 'clock'`), ready
 * when this resolves; it is pushed onto `opened`, for the test to close. `ttlMs`: the state's (default a day).
 */
export async function fakeClockState(
  namespace: string,
  clock: Clock,
  opened: RedisState[],
  ttlMs?: number,
): Promise<RedisState> {
  const state = redisState({
    url: testRedisUrl(),
    namespace,
    timeSource: 'clock',
    clock,
    operationTimeoutMs: TEST_OPERATION_TIMEOUT_MS,
    ...(ttlMs === undefined ? {} : { ttlMs }),
  });
  opened.push(state);
  await state.ready();
  return state;
}
