import type { RunStore } from '@keel/core';
import { optionError, rejectUnknownOptions, requireOptionsObject } from '@keel/core/adapter';

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
    throw optionError({
      where: where,
      option: 'store',
      message: 'store must be a RunStore, such as new PostgresRunStore({ connectionString })',
    });
  }
}
