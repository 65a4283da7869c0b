import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { consecutive } from './breaker/consecutive.js';
import { countWindow } from './breaker/count-window.js';
import { timeWindow } from './breaker/time-window.js';
import { bulkhead } from './bulkhead.js';
import { circuitBreaker } from './circuit-breaker.js';
import { decorrelatedJitter, exponential } from './delays.js';
import { fallback } from './fallback.js';
import { hedge } from './hedge.js';
import { rateLimiter } from './rate-limiter.js';
import { retry } from './retry.js';
import { retryBudget } from './retry-budget.js';
import { timeout } from './timeout.js';
import {
  rejectUnknownOptions,
  requireClock,
  requireNonNegativeNumber,
  requireOptionsObject,
  requirePositiveInteger,
} from './validate.js';

function configError(action: () => unknown): KeelError {
  try {
    action();
  } catch (error) {
    if (KeelError.isInstance(error) && error.code === 'config.invalid') return error;
    throw error;
  }
  throw new Error('expected a config.invalid error');
}

describe('option helpers', () => {
  it('requirePositiveInteger accepts integers from 1, and Infinity only when allowed', () => {
    expect(requirePositiveInteger(3, 'size', 'thing')).toBe(3);
    expect(requirePositiveInteger(Number.POSITIVE_INFINITY, 'size', 'thing', { allowInfinity: true })).toBe(
      Number.POSITIVE_INFINITY,
    );
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3', undefined]) {
      const error = configError(() => requirePositiveInteger(bad, 'size', 'thing'));
      expect(error.message).toMatch(/^thing: size must be an integer >= 1, got /);
      expect(error.data).toMatchObject({ option: 'size' });
    }
  });

  it('requireNonNegativeNumber checks the range and says it in milliseconds for ...Ms options', () => {
    expect(requireNonNegativeNumber(0, 'waitMs', 'thing')).toBe(0);
    expect(requireNonNegativeNumber(Number.POSITIVE_INFINITY, 'waitMs', 'thing')).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(configError(() => requireNonNegativeNumber(-1, 'waitMs', 'thing')).message).toBe(
      'thing: waitMs must be a number of milliseconds >= 0, got -1',
    );
    expect(configError(() => requireNonNegativeNumber(Number.NaN, 'rate', 'thing')).message).toBe(
      'thing: rate must be a number >= 0, got NaN',
    );
    expect(configError(() => requireNonNegativeNumber(11, 'delayMs', 'thing', { maximum: 10 })).message).toBe(
      'thing: delayMs must be a number of milliseconds from 0 to 10, got 11',
    );
    expect(
      configError(() => requireNonNegativeNumber(Number.POSITIVE_INFINITY, 'rate', 'thing', { finite: true }))
        .message,
    ).toBe('thing: rate must be a finite number >= 0, got Infinity');
    expect(
      configError(() => requireNonNegativeNumber(0, 'rate', 'thing', { minimum: Number.MIN_VALUE })).message,
    ).toBe('thing: rate must be a number above 0, got 0');
  });

  it('requireClock wants now, setTimeout and clearTimeout, all functions', () => {
    const fn = () => 0;
    const clock = { now: fn, setTimeout: fn, clearTimeout: fn };
    expect(requireClock(clock, 'thing')).toBe(clock);
    for (const bad of [
      null,
      {},
      { now: fn },
      { now: fn, setTimeout: fn },
      { now: fn, setTimeout: fn, clearTimeout: 1 },
    ]) {
      const error = configError(() => requireClock(bad, 'thing'));
      expect(error.message).toMatch(
        /^thing: clock must be a Clock with now\(\), setTimeout\(\) and clearTimeout\(\)/,
      );
      expect(error.data).toMatchObject({ option: 'clock' });
    }
  });

  it('rejectUnknownOptions names the option and the known ones', () => {
    expect(() => rejectUnknownOptions({ size: 1 }, ['size'], 'thing')).not.toThrow();
    const error = configError(() => rejectUnknownOptions({ size: 1, sise: 2 }, ['size', 'rate'], 'thing'));
    expect(error.message).toBe('Unknown thing option sise (known: size, rate); did you mean size?');
    expect(error.data).toMatchObject({ option: 'sise' });
  });

  it('requireOptionsObject refuses what is not a plain object', () => {
    for (const bad of [null, undefined, 5, 'x', []]) {
      expect(configError(() => requireOptionsObject(bad, 'thing', '{ size: 1 }')).message).toMatch(
        /^thing: options must be an object such as \{ size: 1 \}, got /,
      );
    }
  });
});

describe('every policy factory rejects unknown options', () => {
  const cases: Array<[string, string, () => unknown]> = [
    ['retry', 'maxAttempt', () => retry({ maxAttempt: 3 } as never)],
    ['timeout', 'timeoutMs', () => timeout(1_000, { timeoutMs: 5 } as never)],
    ['retryBudget', 'maxRetry', () => retryBudget({ maxRetry: 3 } as never)],
    ['exponential', 'initalMs', () => exponential({ initalMs: 3 } as never)],
    ['decorrelatedJitter', 'factor', () => decorrelatedJitter({ factor: 3 } as never)],
    ['rateLimiter', 'rate', () => rateLimiter({ ratePerSecond: 1, rate: 3 } as never)],
    ['hedge', 'delay', () => hedge({ delayMs: 1, delay: 3 } as never)],
    ['bulkhead', 'maxQueue', () => bulkhead({ maxConcurrent: 4, maxQueue: 10 } as never)],
    ['fallback', 'whenever', () => fallback([() => 1], { whenever: () => true } as never)],
    ['fallback alternatives[0]', 'nmae', () => fallback([{ nmae: 'x', run: () => 1 }] as never)],
    ['circuitBreaker', 'threshold', () => circuitBreaker({ threshold: 5 } as never)],
    ['consecutive', 'treshold', () => consecutive({ treshold: 5 } as never)],
    ['countWindow', 'windowMs', () => countWindow({ windowMs: 5 } as never)],
    ['timeWindow', 'size', () => timeWindow({ size: 5 } as never)],
  ];
  it.each(cases)('%s rejects %s', (factoryName, option, create) => {
    const error = configError(create);
    expect(error.message).toMatch(
      new RegExp(`^Unknown ${factoryName.replace(/[[\]]/g, '\\$&')} option ${option} \\(known: `),
    );
    expect(error.data).toMatchObject({ option });
  });

  it('every factory names the option in data for an invalid value too', () => {
    const cases: Array<[string, () => unknown]> = [
      ['maxAttempts', () => retry({ maxAttempts: 0 })],
      ['timeoutMs', () => timeout(0)],
      ['clock', () => timeout(1, { clock: {} as never })],
      ['windowMs', () => retryBudget({ windowMs: 1 })],
      ['initialMs', () => exponential({ initialMs: -1 })],
      ['maxWaitMs', () => rateLimiter({ ratePerSecond: 1, maxWaitMs: -1 })],
      ['delayMs', () => hedge({ delayMs: 2 ** 31 })],
      ['maxConcurrent', () => bulkhead({ maxConcurrent: 0 })],
      ['when', () => fallback([() => 1], { when: 1 as never })],
      ['halfOpenMaxProbes', () => circuitBreaker({ halfOpenMaxProbes: 0 })],
      ['threshold', () => consecutive({ threshold: 0 })],
    ];
    for (const [option, create] of cases)
      expect(configError(create).data, option).toMatchObject({ option, path: [option] });
  });
});
