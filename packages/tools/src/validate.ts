import { type Clock, KeelError } from '@keel/core';

/** A `config.invalid` error about `option`. */
export function invalid(where: string, option: string, message: string): KeelError {
  return new KeelError('config.invalid', `${where}: ${message}`, { data: { option } });
}

/** `value`, or `fallback` when undefined; throws unless it is an integer from `minimum` to `maximum`. */
export function integerOption(
  value: unknown,
  fallback: number,
  option: string,
  where: string,
  minimum: number,
  maximum = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
    const unit = option.endsWith('Ms') ? ' of milliseconds' : option.endsWith('Bytes') ? ' of bytes' : '';
    throw invalid(
      where,
      option,
      `${option} must be an integer${unit} from ${minimum} to ${maximum}, got ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  return value;
}

/** The longest a Node timer can wait. */
export const MAX_TIMER_MS = 2_147_483_647;

/** `value`, or `fallback` when undefined; throws unless it is a boolean. */
export function booleanOption(value: unknown, fallback: boolean, option: string, where: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(where, option, `${option} must be true or false`);
  return value;
}

/** `value` when it is a string record (each key passing `checkKey`), `{}` when undefined. */
export function stringRecordOption(
  value: unknown,
  option: string,
  where: string,
  checkKey: (key: string) => boolean = () => true,
): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(where, option, `${option} must be an object of strings`);
  }
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw invalid(where, option, `${option}.${key} must be a string`);
    if (!checkKey(key)) throw invalid(where, option, `${option} has an invalid name ${JSON.stringify(key)}`);
  }
  return { ...(value as Record<string, string>) };
}

/** `value` when it is a {@link Clock}, `fallback` when undefined. */
export function clockOption(value: unknown, fallback: Clock, where: string): Clock {
  if (value === undefined) return fallback;
  const clock = value as Partial<Clock>;
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.setTimeout !== 'function' ||
    typeof clock.clearTimeout !== 'function'
  ) {
    throw invalid(where, 'clock', 'clock must have now(), setTimeout() and clearTimeout() methods');
  }
  return clock as Clock;
}
