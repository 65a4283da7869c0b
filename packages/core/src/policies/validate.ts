// The policy factories' option checks, in the shape they call them (value, option, factory name); each one is the
// option kit's check (`../options/`), so every failure is its `config.invalid` with data `{ where, option, path }`.
import type { JsonValue } from '../errors/keel-error.js';
import {
  requireClock as requireClockOption,
  requireFunction as requireFunctionOption,
  requireInteger as requireIntegerOption,
  requireNumber,
} from '../options/checks.js';
import {
  rejectUnknownOptions as rejectUnknownKeys,
  requireOptionsObject as requireObject,
} from '../options/known-options.js';
import { describeValue, optionError } from '../options/option-error.js';
import type { Clock } from './clock.js';

/** Throws unless `value` is a plain object; `example` (such as `{ maxConcurrent: 4 }`) is shown in the message. */
export function requireOptionsObject(
  value: unknown,
  factoryName: string,
  example?: string,
): asserts value is object {
  requireObject(value, { where: factoryName, ...(example === undefined ? {} : { example }) });
}

/** Throws `config.invalid` naming the first key of `options` not in `allowed`, with a "did you mean". */
export function rejectUnknownOptions(options: object, allowed: readonly string[], factoryName: string): void {
  rejectUnknownKeys(options, allowed, { where: factoryName });
}

/** Throws unless `value` is an integer of at least `minimum`; `Infinity` passes too when `allowInfinity` is set. */
export function requireInteger(
  value: unknown,
  option: string,
  factoryName: string,
  { minimum, allowInfinity = false }: { minimum: number; allowInfinity?: boolean },
): number {
  return requireIntegerOption(value, {
    where: factoryName,
    option,
    min: minimum,
    allowInfinity,
    unit: false,
  });
}

/** Throws unless `value` is an integer of at least 1 (or Infinity, when `allowInfinity` is set). */
export function requirePositiveInteger(
  value: unknown,
  option: string,
  factoryName: string,
  { allowInfinity = false }: { allowInfinity?: boolean } = {},
): number {
  return requireInteger(value, option, factoryName, { minimum: 1, allowInfinity });
}

/** Throws unless `value` is an integer of at least 0 (or Infinity, when `allowInfinity` is set). */
export function requireNonNegativeInteger(
  value: unknown,
  option: string,
  factoryName: string,
  { allowInfinity = false }: { allowInfinity?: boolean } = {},
): number {
  return requireInteger(value, option, factoryName, { minimum: 0, allowInfinity });
}

/**
 * Throws unless `value` is a number from `minimum` (0 unless given; `Number.MIN_VALUE` for "above 0") to `maximum`
 * (Infinity unless given). NaN never passes; Infinity passes only when `maximum` is Infinity and `finite` is not
 * set. Options named `...Ms` are described as milliseconds.
 */
export function requireNonNegativeNumber(
  value: unknown,
  option: string,
  factoryName: string,
  {
    minimum = 0,
    maximum = Number.POSITIVE_INFINITY,
    finite = false,
  }: { minimum?: number; maximum?: number; finite?: boolean } = {},
): number {
  return requireNumber(value, {
    where: factoryName,
    option,
    min: minimum,
    ...(maximum === Number.POSITIVE_INFINITY ? {} : { max: maximum }),
    finite,
  });
}

/** Throws unless `value` is a rate in (0, 1]. */
export function requireRate(value: unknown, option: string, factoryName: string): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw optionError({
      where: factoryName,
      option,
      message: `${option} must be a number in (0, 1] such as 0.5 for 50 %, got ${describe(value)}`,
    });
  }
  return value;
}

/** Throws unless `value` is a function. `signature` (such as `(error) => boolean`) is shown in the message. */
export function requireFunction<F>(value: F, option: string, factoryName: string, signature: string): F {
  return requireFunctionOption<F>(value, { where: factoryName, option, signature });
}

/** Throws unless `value` is a {@link Clock}: `now`, `setTimeout` and `clearTimeout` must all be functions. */
export function requireClock(value: unknown, factoryName: string, option = 'clock'): Clock {
  return requireClockOption<Clock>(value, { where: factoryName, option });
}

/** A short description of a bad value for an error message. */
export const describe = describeValue;

/** True when `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` is an integer of at least 0, as saved counters must be. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
