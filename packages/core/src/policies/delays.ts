import { optionError } from '../options/option-error.js';
import { rejectUnknownOptions, requireNonNegativeNumber, requireOptionsObject } from './validate.js';

/**
 * The longest delay any keel delay yields: 2^31 - 1 ms (about 24.8 days). Node's `setTimeout` fires at once for
 * anything longer, so a larger delay would silently become no delay at all.
 */
export const MAX_DELAY_MS = 2_147_483_647;

/** A source of random numbers in [0, 1), like `Math.random` (the default wherever one is taken). */
export type RandomSource = () => number;

/** What a {@link Delay} is stepped with. */
export interface DelayInput {
  /** The attempt that just failed: 1 after the first call, 2 after the first retry, and so on. */
  readonly attempt: number;
  /** What this delay returned the previous time it was stepped; `undefined` before the first retry. */
  readonly previousMs: number | undefined;
  /** Where jitter takes its randomness from. */
  readonly random: RandomSource;
}

/**
 * How long to wait before the next attempt, as an immutable value: `next` is a pure function of its input, so a test
 * steps a delay with chosen attempts and a chosen random source instead of faking a clock.
 *
 * Every delay made here returns a finite number in [0, {@link MAX_DELAY_MS}] for any input, even when the random
 * source or a wrapped custom delay returns NaN, a negative number or Infinity.
 */
export interface Delay {
  /** The delay in milliseconds before the attempt after `input.attempt`. */
  next(input: DelayInput): number;
}

/** Options of {@link exponential}. */
export interface ExponentialOptions {
  /** The delay after the first failed attempt. Defaults to 500. */
  initialMs?: number;
  /** What each further delay is multiplied by; at least 1. Defaults to 2. */
  factor?: number;
  /** The cap no delay exceeds. Defaults to 30_000, or to `initialMs` when that is larger. */
  maxMs?: number;
}

/** Options of {@link decorrelatedJitter}. */
export interface DecorrelatedJitterOptions {
  /** The smallest delay, and the first one's lower bound; above 0. Defaults to 500. */
  initialMs?: number;
  /** The cap no delay exceeds. Defaults to 30_000, or to `initialMs` when that is larger. */
  maxMs?: number;
}

/**
 * The same delay every time.
 *
 * @example
 *   retry({ delay: constant(1_000) });
 */
export function constant(delayMs: number): Delay {
  checkMs('constant', 'delayMs', delayMs, 0);
  return Object.freeze({ next: () => delayMs });
}

/**
 * `initialMs × factor^(attempt - 1)`, capped at `maxMs`. Computed against the cap, so attempt 10,000 yields `maxMs`
 * rather than Infinity or NaN.
 *
 * @example
 *   retry({ delay: fullJitter(exponential({ initialMs: 200, factor: 2, maxMs: 10_000 })) });
 */
export function exponential(options: ExponentialOptions = {}): Delay {
  requireOptionsObject(options, 'exponential');
  rejectUnknownOptions(options, ['initialMs', 'factor', 'maxMs'], 'exponential');
  const initialMs = options.initialMs ?? 500;
  const factor = options.factor ?? 2;
  checkMs('exponential', 'initialMs', initialMs, 0);
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    throw optionError({
      where: 'exponential',
      option: 'factor',
      message: `factor must be a finite number >= 1, got ${String(factor)}`,
    });
  }
  const maxMs = options.maxMs ?? Math.max(30_000, initialMs);
  checkMs('exponential', 'maxMs', maxMs, initialMs);
  if (initialMs === 0 || factor === 1 || initialMs === maxMs) return Object.freeze({ next: () => initialMs });
  // The exponent at which the delay reaches the cap; beyond it no power is computed at all.
  const capExponent = Math.log(maxMs / initialMs) / Math.log(factor);
  return Object.freeze({
    next(input: DelayInput): number {
      const exponent = attemptOf(input) - 1;
      if (exponent >= capExponent) return maxMs;
      return Math.min(maxMs, initialMs * factor ** exponent);
    },
  });
}

/**
 * A random delay between 0 and what `delay` yields ("full jitter", from the AWS architecture blog's
 * "Exponential Backoff And Jitter"). Spreads retries of many clients the most.
 *
 * @example
 *   retry({ delay: fullJitter(exponential({ initialMs: 500 })) });
 */
export function fullJitter(delay: Delay): Delay {
  checkDelay('fullJitter', delay);
  return Object.freeze({
    next: (input: DelayInput) => unitRandom(input.random) * safeMs(delay.next(input)),
  });
}

/**
 * Half of what `delay` yields, plus a random part up to the other half ("equal jitter"): never waits less than half
 * the base delay.
 *
 * @example
 *   retry({ delay: equalJitter(exponential({ initialMs: 500 })) });
 */
export function equalJitter(delay: Delay): Delay {
  checkDelay('equalJitter', delay);
  return Object.freeze({
    next(input: DelayInput): number {
      const half = safeMs(delay.next(input)) / 2;
      return half + unitRandom(input.random) * half;
    },
  });
}

/**
 * AWS's "decorrelated jitter": `min(maxMs, random_between(initialMs, previous × 3))`, where `previous` starts at
 * `initialMs`. Each delay grows from the one before rather than from the attempt number, so it carries its own growth
 * and takes no base delay.
 *
 * @example
 *   retry({ delay: decorrelatedJitter({ initialMs: 100, maxMs: 20_000 }) });
 */
export function decorrelatedJitter(options: DecorrelatedJitterOptions = {}): Delay {
  requireOptionsObject(options, 'decorrelatedJitter');
  rejectUnknownOptions(options, ['initialMs', 'maxMs'], 'decorrelatedJitter');
  const initialMs = options.initialMs ?? 500;
  checkMs('decorrelatedJitter', 'initialMs', initialMs, Number.MIN_VALUE);
  const maxMs = options.maxMs ?? Math.max(30_000, initialMs);
  checkMs('decorrelatedJitter', 'maxMs', maxMs, initialMs);
  return Object.freeze({
    next(input: DelayInput): number {
      const previousMs = Math.min(maxMs, Math.max(initialMs, safeMs(input.previousMs ?? initialMs)));
      return Math.min(maxMs, initialMs + unitRandom(input.random) * (previousMs * 3 - initialMs));
    },
  });
}

/** Clamps any number to a usable delay: NaN and negatives become 0, anything above {@link MAX_DELAY_MS} the cap. */
export function safeMs(value: number): number {
  if (!(value > 0)) return 0;
  return Math.min(value, MAX_DELAY_MS);
}

function attemptOf(input: DelayInput): number {
  const attempt = Math.floor(input.attempt);
  // Math.max would pass NaN through.
  return Number.isNaN(attempt) ? 1 : Math.max(1, attempt);
}

/** A random number clamped to [0, 1]; NaN counts as 0, so a broken source yields the smallest delay, never NaN. */
function unitRandom(random: RandomSource): number {
  const value = random();
  if (!(value > 0)) return 0;
  return Math.min(value, 1);
}

function checkMs(factoryName: string, option: string, value: unknown, minimum: number): void {
  requireNonNegativeNumber(value, option, factoryName, { minimum, maximum: MAX_DELAY_MS });
}

function checkDelay(where: string, delay: unknown): void {
  if (typeof delay !== 'object' || delay === null || typeof (delay as Delay).next !== 'function') {
    throw optionError({
      where: where,
      option: 'delay',
      message: 'expected a Delay (an object with a next(input) method), such as exponential()',
    });
  }
}
