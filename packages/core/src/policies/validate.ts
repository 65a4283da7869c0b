// Option checks shared by every policy factory. Each failure is a `config.invalid` KeelError whose message names the
// factory and the option and says what would be accepted, with `data: { option }`.
import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { Clock } from './clock.js';
import { closestName } from './closest-name.js';

/** A `config.invalid` error about `option` of `factoryName`. */
export function invalidOption(factoryName: string, option: string, message: string): KeelError {
  return new KeelError('config.invalid', `${factoryName}: ${message}`, { data: { option } });
}

/** Throws unless `value` is a plain object; `example` (such as `{ maxConcurrent: 4 }`) is shown in the message. */
export function requireOptionsObject(
  value: unknown,
  factoryName: string,
  example?: string,
): asserts value is object {
  if (!isJsonObject(value)) {
    const such = example === undefined ? '' : ` such as ${example}`;
    throw invalidOption(factoryName, 'options', `options must be an object${such}, got ${describe(value)}`);
  }
}

/**
 * Throws `config.invalid` naming the first key of `options` that is not in `allowed`, and the closest allowed one when
 * it looks like a slip (`baseURL` for `baseUrl`), so that a misspelt option is never ignored silently.
 */
export function rejectUnknownOptions(options: object, allowed: readonly string[], factoryName: string): void {
  for (const key of Object.keys(options)) {
    if (allowed.includes(key)) continue;
    const near = closestName(key, allowed);
    const hint = near === undefined ? '' : `; did you mean ${near}?`;
    throw new KeelError(
      'config.invalid',
      `Unknown ${factoryName} option ${key} (known: ${allowed.join(', ')})${hint}`,
      {
        data: { option: key },
      },
    );
  }
}

/** Throws unless `value` is an integer of at least `minimum`; `Infinity` passes too when `allowInfinity` is set. */
export function requireInteger(
  value: unknown,
  option: string,
  factoryName: string,
  { minimum, allowInfinity = false }: { minimum: number; allowInfinity?: boolean },
): number {
  const whole = Number.isInteger(value) || (allowInfinity && value === Number.POSITIVE_INFINITY);
  if (typeof value !== 'number' || !whole || value < minimum) {
    const orInfinity = allowInfinity ? ' (or Infinity)' : '';
    throw invalidOption(
      factoryName,
      option,
      `${option} must be an integer >= ${minimum}${orInfinity}, got ${describe(value)}`,
    );
  }
  return value;
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
  if (
    typeof value !== 'number' ||
    !(value >= minimum && value <= maximum) ||
    (finite && !Number.isFinite(value))
  ) {
    const kind = `${finite && maximum === Number.POSITIVE_INFINITY ? 'finite ' : ''}number${option.endsWith('Ms') ? ' of milliseconds' : ''}`;
    const range =
      maximum === Number.POSITIVE_INFINITY
        ? minimum === Number.MIN_VALUE
          ? 'above 0'
          : `>= ${minimum}`
        : minimum === Number.MIN_VALUE
          ? `above 0 and at most ${maximum}`
          : `from ${minimum} to ${maximum}`;
    throw invalidOption(factoryName, option, `${option} must be a ${kind} ${range}, got ${describe(value)}`);
  }
  return value;
}

/** Throws unless `value` is a rate in (0, 1]. */
export function requireRate(value: unknown, option: string, factoryName: string): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw invalidOption(
      factoryName,
      option,
      `${option} must be a number in (0, 1] such as 0.5 for 50 %, got ${describe(value)}`,
    );
  }
  return value;
}

/** Throws unless `value` is a function. `signature` (such as `(error) => boolean`) is shown in the message. */
export function requireFunction<F>(value: F, option: string, factoryName: string, signature: string): F {
  if (typeof value !== 'function') {
    throw invalidOption(
      factoryName,
      option,
      `${option} must be a function ${signature}, got ${describe(value)}`,
    );
  }
  return value;
}

/** Throws unless `value` is a {@link Clock}: `now`, `setTimeout` and `clearTimeout` must all be functions. */
export function requireClock(value: unknown, factoryName: string, option = 'clock'): Clock {
  const clock = value as Partial<Clock> | null | undefined;
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw invalidOption(
      factoryName,
      option,
      `${option} must be a Clock with now(), setTimeout() and clearTimeout() methods, got ${describe(value)}`,
    );
  }
  return clock as Clock;
}

/** A short description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** True when `value` is a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` is an integer of at least 0, as saved counters must be. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
