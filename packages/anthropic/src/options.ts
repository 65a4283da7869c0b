import { closestName, KeelError } from '@keel/core';

/** Throws `config.invalid` unless `options` is a plain object (not null, not an array). */
export function requireOptionsObject(
  options: unknown,
  where: string,
  example: string,
): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
    throw new KeelError(
      'config.invalid',
      `${where}: options must be an object such as ${example}, got ${got}`,
      {
        data: { option: 'options' },
      },
    );
  }
}

/**
 * Throws `config.invalid` for a key of `options` that is not in `known`, naming the closest known option when one is
 * near (the Anthropic SDK's `baseURL` for keel's `baseUrl`): a misspelt option would otherwise be ignored silently.
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
