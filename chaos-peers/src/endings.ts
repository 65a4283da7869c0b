import type { RunEnding } from '@keel/chaos';

/** A run that ended by throwing something its framework does not type: the caller learns nothing from it. */
export function untypedEnding(thrown: unknown): RunEnding {
  const name = thrown instanceof Error ? thrown.name : typeof thrown;
  return {
    status: 'failed',
    code: `untyped:${name}`,
    message: thrown instanceof Error ? thrown.message : String(thrown),
    typed: false,
  };
}

/** A run that ended with one of its framework's own error types, named by `code`. */
export function typedFailure(code: string, thrown: Error): RunEnding {
  return { status: 'failed', code, message: thrown.message, typed: true };
}
