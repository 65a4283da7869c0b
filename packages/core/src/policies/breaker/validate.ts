// Option checks shared by the circuit breaker and its strategies: each failure is a `config.invalid` that names
// the option and says what would be accepted.
import { type JsonValue, KeelError } from '../../errors/keel-error.js';

/** Throws `config.invalid` unless `value` is an integer >= `minimum`. */
export function requireInteger(owner: string, name: string, value: unknown, minimum: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new KeelError(
      'config.invalid',
      `${owner}: ${name} must be an integer >= ${minimum}, got ${describe(value)}`,
      {
        data: { option: name },
      },
    );
  }
  return value;
}

/** Throws `config.invalid` unless `value` is a rate in (0, 1]. */
export function requireRate(owner: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new KeelError(
      'config.invalid',
      `${owner}: ${name} must be a number in (0, 1] such as 0.5 for 50 %, got ${describe(value)}`,
      { data: { option: name } },
    );
  }
  return value;
}

/** Throws `config.invalid` naming the first key of `options` that is not in `known` (catches typos). */
export function rejectUnknownOptions(owner: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new KeelError(
        'config.invalid',
        `${owner}: unknown option "${key}"; known options: ${known.join(', ')}`,
        {
          data: { option: key },
        },
      );
    }
  }
}

/** Throws `config.invalid` unless `options` is undefined or a plain object. */
export function requireOptionsObject(owner: string, options: unknown): void {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new KeelError('config.invalid', `${owner}: options must be an object, got ${describe(options)}`);
  }
}

/** A short description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** True when `value` is a plain JSON object. */
export function isJsonObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws `config.invalid` unless `value` is a finite number of milliseconds >= `minimum`. */
export function requireMilliseconds(owner: string, name: string, value: unknown, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum) {
    throw new KeelError(
      'config.invalid',
      `${owner}: ${name} must be a finite number of milliseconds >= ${minimum}, got ${describe(value)}`,
      { data: { option: name } },
    );
  }
  return value;
}
