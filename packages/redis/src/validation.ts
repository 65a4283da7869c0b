// Option checks of @keel/redis: every mistake is a `config.invalid` KeelError that names the factory and the option
// and says what would be accepted, with `data: { option }`, like core's policy factories.
import { optionError, rejectUnknownOptions, requireOptionsObject } from '@keel/core/adapter';

/** Throws unless `options` is a plain object holding only `known` keys (a misspelt key gets a "did you mean"). */
export function checkOptionsObject(
  options: unknown,
  known: readonly string[],
  factory: string,
  example: string,
) {
  requireOptionsObject(options, { where: factory, example: example });
  rejectUnknownOptions(options, known, { where: factory });
}

/** Throws unless `value` is an integer number of milliseconds from `minimum` to 2^31 - 1 (what a timer can wait). */
export function requireMilliseconds(value: unknown, option: string, factory: string, minimum = 1): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > 2_147_483_647) {
    throw optionError({
      where: factory,
      option: option,
      message: `${option} must be an integer number of milliseconds from ${minimum} to 2147483647, got ${describe(value)}`,
    });
  }
  return value;
}

/** Throws unless `value` is one of `choices`. */
export function requireChoice<T extends string>(
  value: unknown,
  choices: readonly T[],
  option: string,
  factory: string,
): T {
  if (!choices.includes(value as T)) {
    const listed = choices.map((choice) => `'${choice}'`).join(' or ');
    throw optionError({
      where: factory,
      option: option,
      message: `${option} must be ${listed}, got ${describe(value)}`,
    });
  }
  return value as T;
}

/** Throws unless `value` is a non-empty string without whitespace (it becomes part of Redis keys). */
export function requireName(value: unknown, option: string, factory: string, forbidColon = false): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    /\s/.test(value) ||
    (forbidColon && value.includes(':'))
  ) {
    const colon = forbidColon ? ', colon' : '';
    throw optionError({
      where: factory,
      option: option,
      message: `${option} must be a non-empty string without whitespace${colon} (it is part of Redis keys), got ${describe(value)}`,
    });
  }
  return value;
}

/** A short description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
