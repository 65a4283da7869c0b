import { KeelError, type RunStore, rejectUnknownOptions, requireOptionsObject } from '@keel/core';

/** Checks an options object: a plain object with only `known` keys (`config.invalid` names the slip). */
export function checkOptionsObject(
  options: unknown,
  known: readonly string[],
  where: string,
  example: string,
): void {
  requireOptionsObject(options, { where: where, example: example });
  rejectUnknownOptions(options, known, { where: where });
}

/** Throws `config.invalid` unless `store` looks like a RunStore. */
export function checkStore(store: unknown, where: string): asserts store is RunStore {
  const candidate = store as Partial<Record<keyof RunStore, unknown>> | null;
  const methods = ['createRun', 'loadRun', 'listRuns', 'requestCancellation'] as const;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    methods.some((name) => typeof candidate[name] !== 'function')
  ) {
    throw invalid(where, 'store must be a RunStore, such as new PostgresRunStore({ connectionString })');
  }
}

/** The value of an optional integer option, or its default; `config.invalid` for anything else. */
export function integerOption(
  value: unknown,
  fallback: number,
  where: string,
  option: string,
  minimum: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw invalid(where, `${option} must be an integer of at least ${minimum}, not ${String(value)}`);
  }
  return value;
}

/** A `config.invalid` error of `where`. */
export function invalid(where: string, message: string): KeelError {
  return new KeelError('config.invalid', `${where}: ${message}`, { data: { where } });
}
