// The options object itself: that it is an object, and that it holds no key the factory does not know, so a misspelt
// option is refused with a "did you mean" instead of ignored.
import { closestName } from './closest-name.js';
import { describeValue, type OptionPath, optionError, optionPathText } from './option-error.js';

/**
 * The options a factory knows, typed against its options interface so that adding an option and forgetting it here
 * (or listing one that does not exist) fails to compile:
 *
 * @example
 *   const KNOWN = { url: true, timeoutMs: true } satisfies KnownOptions<ClientOptions>;
 */
export type KnownOptions<T> = Record<keyof T, true>;

/** Where the options object is. */
export interface OptionsObjectCheck {
  /** What is being configured (`httpTool "fetch_page"`). */
  where: string;
  /** The object's path when it is nested in another options object (`['limits']`). Defaults to the top: `[]`. */
  path?: OptionPath;
}

/**
 * Throws `config.invalid` unless `value` is a plain object (not null, not an array). `example` (such as
 * `{ maxConcurrent: 4 }`) is shown in the message.
 */
export function requireOptionsObject(
  value: unknown,
  check: OptionsObjectCheck & { example?: string },
): asserts value is object {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return;
  const path = check.path ?? [];
  const name = path.length === 0 ? 'options' : optionPathText(path);
  const such = check.example === undefined ? '' : ` such as ${check.example}`;
  throw optionError({
    where: check.where,
    option: path.length === 0 ? 'options' : String(path[0]),
    path,
    message: `${name} must be an object${such}, got ${describeValue(value)}`,
  });
}

/**
 * Throws `config.invalid` naming the first key of `options` not in `known`, with the closest known one when it looks
 * like a slip (`baseURL` for `baseUrl`): `Unknown <where> option baseURL (known: ...); did you mean baseUrl?`. The
 * data's `path` is the unknown key's path, and `suggestion` the known name meant, when there is one.
 */
export function rejectUnknownOptions(
  options: object,
  known: Readonly<Record<string, true>> | readonly string[],
  check: OptionsObjectCheck,
): void {
  const names = Array.isArray(known) ? (known as readonly string[]) : Object.keys(known);
  for (const key of Object.keys(options)) {
    if (names.includes(key)) continue;
    const near = closestName(key, names);
    const hint = near === undefined ? '' : `; did you mean ${near}?`;
    const path = [...(check.path ?? []), key];
    throw optionError({
      where: check.where,
      option: String(path[0]),
      path,
      message: `Unknown ${check.where} option ${key} (known: ${names.join(', ')})${hint}`,
      prefixWhere: false,
      data: near === undefined ? {} : { suggestion: near },
    });
  }
}
