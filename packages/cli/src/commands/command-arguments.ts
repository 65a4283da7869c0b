import { KeelError } from '@keel/core';

/** The Redis of a fleet when `--redis` is not given: KEEL_REDIS_URL, else a local server. */
export function redisUrlOf(given: string | undefined, environment: NodeJS.ProcessEnv): string {
  return given ?? environment.KEEL_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** Runs `parse`, turning a parse failure into `config.invalid` that points at the command's help. */
export function parsedArguments<Parsed>(command: string, parse: () => Parsed): Parsed {
  try {
    return parse();
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `${(error as Error).message}; run keel ${command} --help for the options`,
    );
  }
}

/** An integer option of at least `minimum`; `config.invalid` otherwise. */
export function integerArgument(name: string, value: string, minimum: number): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < minimum) {
    throw new KeelError(
      'config.invalid',
      `${name} must be an integer of at least ${minimum}, not "${value}"`,
    );
  }
  return parsed;
}
