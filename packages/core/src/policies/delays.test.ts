import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import {
  constant,
  type Delay,
  decorrelatedJitter,
  equalJitter,
  exponential,
  fullJitter,
  MAX_DELAY_MS,
  type RandomSource,
  safeMs,
} from './delays.js';

const fixed =
  (value: number): RandomSource =>
  () =>
    value;

/** Steps `delay` like retry does: attempt 1.. with the previous output fed back. */
function run(delay: Delay, attempts: number, random: RandomSource): number[] {
  const outputs: number[] = [];
  let previousMs: number | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    previousMs = delay.next({ attempt, previousMs, random });
    outputs.push(previousMs);
  }
  return outputs;
}

function expectUsable(values: number[], maxMs = MAX_DELAY_MS): void {
  const unusable = values.filter((value) => !(Number.isFinite(value) && value >= 0 && value <= maxMs));
  expect(unusable).toEqual([]);
}

function configError(action: () => unknown): KeelError {
  try {
    action();
  } catch (error) {
    if (KeelError.isInstance(error)) {
      expect(error.code).toBe('config.invalid');
      return error;
    }
    throw error;
  }
  throw new Error('expected a config.invalid error');
}

const brokenSources: Array<[string, RandomSource]> = [
  ['NaN', fixed(Number.NaN)],
  ['negative', fixed(-0.5)],
  ['above one', fixed(7)],
  ['Infinity', fixed(Number.POSITIVE_INFINITY)],
  ['-Infinity', fixed(Number.NEGATIVE_INFINITY)],
];

describe('constant', () => {
  it('yields the same delay for every attempt', () => {
    expect(run(constant(250), 5, Math.random)).toEqual([250, 250, 250, 250, 250]);
  });

  it('rejects a negative or non-finite delay', () => {
    configError(() => constant(-1));
    configError(() => constant(Number.NaN));
    configError(() => constant(Number.POSITIVE_INFINITY));
    expect(configError(() => constant(MAX_DELAY_MS + 1)).message).toMatch(
      /delayMs must be a number of milliseconds from 0 to 2147483647, got 2147483648/,
    );
  });
});

describe('exponential', () => {
  it('multiplies by the factor from initialMs and stops at maxMs', () => {
    const delay = exponential({ initialMs: 100, factor: 2, maxMs: 1_000 });
    expect(run(delay, 6, Math.random)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('defaults to 500 ms doubling up to 30 s', () => {
    const outputs = run(exponential(), 8, Math.random);
    expect(outputs.slice(0, 4)).toEqual([500, 1_000, 2_000, 4_000]);
    expect(outputs[7]).toBe(30_000);
  });

  it('does not overflow at attempt 10,000 (nor at huge or odd attempts)', () => {
    const cases: Array<[Delay, number]> = [
      [exponential({ initialMs: 500, factor: 2, maxMs: 30_000 }), 30_000],
      [exponential({ initialMs: 1, factor: 10, maxMs: MAX_DELAY_MS }), MAX_DELAY_MS],
      [exponential({ initialMs: 0, factor: 2, maxMs: 1_000 }), 0],
      [exponential({ initialMs: 10, factor: 1.01, maxMs: 100 }), 100],
    ];
    for (const [delay, expected] of cases) {
      const values = run(delay, 10_000, Math.random);
      expectUsable(values);
      expect(values[9_999]).toBe(expected);
      for (const attempt of [1e6, 1e300, Number.POSITIVE_INFINITY]) {
        expect(delay.next({ attempt, previousMs: undefined, random: Math.random })).toBe(expected);
      }
    }
  });

  it('treats a nonsensical attempt number as the first', () => {
    const delay = exponential({ initialMs: 100, factor: 3, maxMs: 10_000 });
    for (const attempt of [0, -5, Number.NaN, 0.5]) {
      expect(delay.next({ attempt, previousMs: undefined, random: Math.random })).toBe(100);
    }
  });

  it('raises the default cap to initialMs when initialMs is larger', () => {
    expect(run(exponential({ initialMs: 45_000 }), 3, Math.random)).toEqual([45_000, 45_000, 45_000]);
  });

  it('rejects invalid options with a message saying what to fix', () => {
    expect(configError(() => exponential({ factor: 0.5 })).message).toMatch(
      /factor must be a finite number >= 1, got 0.5/,
    );
    configError(() => exponential({ factor: Number.NaN }));
    configError(() => exponential({ initialMs: -1 }));
    configError(() => exponential({ initialMs: Number.POSITIVE_INFINITY }));
    expect(configError(() => exponential({ initialMs: 100, maxMs: 50 })).message).toMatch(
      /maxMs must be a number of milliseconds from 100 to 2147483647, got 50/,
    );
    expect(configError(() => exponential({ initalMs: 100 } as never)).message).toMatch(
      /Unknown exponential option initalMs \(known: initialMs, factor, maxMs\)/,
    );
    configError(() => exponential(null as never));
  });

  it('is an immutable value', () => {
    const delay = exponential();
    expect(Object.isFrozen(delay)).toBe(true);
    expect(run(delay, 3, Math.random)).toEqual(run(delay, 3, Math.random));
  });
});

describe('fullJitter', () => {
  it('scales the base delay by the random number', () => {
    const base = exponential({ initialMs: 100, factor: 2, maxMs: 1_000 });
    expect(run(fullJitter(base), 4, fixed(0.5))).toEqual([50, 100, 200, 400]);
    expect(run(fullJitter(base), 2, fixed(0))).toEqual([0, 0]);
  });

  it('never yields NaN, a negative or too large a delay, whatever the random source or base', () => {
    const badBase: Delay = {
      next: ({ attempt }) => [Number.NaN, -100, Number.POSITIVE_INFINITY][attempt % 3]!,
    };
    for (const [, random] of brokenSources) {
      expectUsable(run(fullJitter(exponential()), 10_000, random), 30_000);
      expectUsable(run(fullJitter(badBase), 30, random));
    }
  });

  it('rejects something that is not a delay', () => {
    configError(() => fullJitter(undefined as never));
    configError(() => fullJitter({} as never));
  });
});

describe('equalJitter', () => {
  it('keeps half the base delay and randomises the other half', () => {
    const base = constant(1_000);
    expect(run(equalJitter(base), 1, fixed(0))).toEqual([500]);
    expect(run(equalJitter(base), 1, fixed(0.5))).toEqual([750]);
    expect(run(equalJitter(base), 1, fixed(0.999))).toEqual([999.5]);
  });

  it('never yields NaN or a negative delay', () => {
    for (const [, random] of brokenSources) {
      expectUsable(run(equalJitter(exponential()), 10_000, random), 30_000);
    }
  });
});

describe('decorrelatedJitter', () => {
  it('follows min(maxMs, random_between(initialMs, previous × 3))', () => {
    const delay = decorrelatedJitter({ initialMs: 100, maxMs: 10_000 });
    // With random = 1 each delay is three times the previous one: 300, 900, 2700, 8100, then the cap.
    expect(run(delay, 6, fixed(1))).toEqual([300, 900, 2_700, 8_100, 10_000, 10_000]);
    expect(run(delay, 3, fixed(0))).toEqual([100, 100, 100]);
    // random 0.5 from previous 100: 100 + 0.5 × (300 - 100) = 200; then 100 + 0.5 × (600 - 100) = 350.
    expect(run(delay, 2, fixed(0.5))).toEqual([200, 350]);
  });

  it('stays within [initialMs, maxMs] for 10,000 steps with any random source', () => {
    for (const [, random] of [...brokenSources, ['Math.random', Math.random] as [string, RandomSource]]) {
      const values = run(decorrelatedJitter({ initialMs: 50, maxMs: 5_000 }), 10_000, random);
      expectUsable(values, 5_000);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(50);
    }
  });

  it('survives a garbage previous delay', () => {
    const delay = decorrelatedJitter({ initialMs: 100, maxMs: 1_000 });
    for (const previousMs of [Number.NaN, -5, Number.POSITIVE_INFINITY]) {
      expectUsable([delay.next({ attempt: 2, previousMs, random: fixed(0.7) })], 1_000);
    }
  });

  it('rejects an initialMs of 0, which could never grow', () => {
    expect(configError(() => decorrelatedJitter({ initialMs: 0 })).message).toMatch(/initialMs .* above 0/);
    configError(() => decorrelatedJitter({ initialMs: 100, maxMs: 10 }));
  });
});

describe('safeMs', () => {
  it('clamps any number into [0, MAX_DELAY_MS]', () => {
    expect(safeMs(Number.NaN)).toBe(0);
    expect(safeMs(-1)).toBe(0);
    expect(safeMs(Number.POSITIVE_INFINITY)).toBe(MAX_DELAY_MS);
    expect(safeMs(12.5)).toBe(12.5);
  });
});
