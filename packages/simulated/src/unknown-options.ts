import { closestName, KeelError } from '@keel/core';

/**
 * Throws `config.invalid` for a key of `options` that is not in `known`, naming the closest known option when one is
 * near (`retryAfter` for `retryAfterMs`): a misspelt option would otherwise be ignored silently.
 */
export function rejectUnknownOptions(options: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closestName(key, known);
    const hint = near === undefined ? '.' : `; did you mean ${near}?`;
    throw new KeelError(
      'config.invalid',
      `${where}: Unknown option ${key}${hint} Known options: ${known.join(', ')}`,
      {
        data: { option: key },
      },
    );
  }
}
