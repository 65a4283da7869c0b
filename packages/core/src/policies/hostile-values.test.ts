// Every policy settles, and never throws synchronously, when the function it runs throws, rejects with or returns a
// hostile value (a revoked proxy, a proxy whose traps throw, throwing getters, forged brands): the forced timeout once
// hung forever on a revoked proxy, its brand check throwing inside a promise callback.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '../testing/fake-clock.js';
import { HOSTILE_VALUES } from '../testing/hostile-values.js';
import { bulkhead } from './bulkhead.js';
import { circuitBreaker } from './circuit-breaker.js';
import { type ComposablePolicy, compose } from './compose.js';
import { constant } from './delays.js';
import { fallback } from './fallback.js';
import { hedge } from './hedge.js';
import { rateLimiter } from './rate-limiter.js';
import { retry } from './retry.js';
import { timeout } from './timeout.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await flushMicrotasks();
  const count = unhandled.length;
  unhandled.length = 0;
  expect(count, 'unhandled rejections').toBe(0);
});

const POLICIES: ReadonlyArray<readonly [string, (clock: FakeClock) => ComposablePolicy]> = [
  ['retry', (clock) => retry({ maxAttempts: 3, delay: constant(10), clock })],
  ['circuitBreaker', (clock) => circuitBreaker({ clock })],
  ['timeout (cooperative)', (clock) => timeout(1_000, { clock })],
  ['timeout (forced)', (clock) => timeout(1_000, { strategy: 'forced', clock })],
  ['bulkhead', () => bulkhead({ maxConcurrent: 1 })],
  ['rateLimiter', (clock) => rateLimiter({ ratePerSecond: 10, clock })],
  ['fallback', () => fallback([() => 'replaced'])],
  ['hedge', (clock) => hedge({ delayMs: 100, clock })],
  [
    'compose',
    (clock) =>
      compose(
        fallback([() => 'replaced']),
        retry({ maxAttempts: 2, delay: constant(10), clock }),
        circuitBreaker({ clock }),
        timeout(1_000, { strategy: 'forced', clock }),
        bulkhead({ maxConcurrent: 4 }),
      ),
  ],
];

const HOW: ReadonlyArray<readonly [string, (value: unknown) => () => unknown]> = [
  [
    'throws',
    (value) => () => {
      throw value;
    },
  ],
  ['rejects with', (value) => () => Promise.reject(value)],
  ['returns', (value) => () => value],
  ['resolves with', (value) => async () => value],
];

describe.each(HOSTILE_VALUES)('$name', ({ make }) => {
  describe.each(POLICIES)('%s', (_, build) => {
    it.each(HOW)('settles when the function %s it', async (_how, fn) => {
      const clock = new FakeClock();
      const policy = build(clock);
      let settled = false;
      const outcome = policy.execute(fn(make()) as () => unknown).then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      for (let round = 0; round < 10 && !settled; round++) await clock.advance(1_000);
      expect(settled).toBe(true);
      await outcome;
    });
  });
});
