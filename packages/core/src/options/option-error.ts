// The one refusal of the option kit: `config.invalid` with typed data that says where the mistake is, so that callers
// (the CLI locating a YAML field) read `data` and never parse the message.
import { type JsonValue, KeelError } from '../errors/keel-error.js';

/**
 * Where an option sits inside the options object: keys and array indexes from the top, the option itself first.
 * `['headers', 'authorization']` is `options.headers.authorization`; `['command', 2, 3]` is `options.command[2][3]`.
 * The empty path is the options object itself.
 */
export type OptionPath = readonly (string | number)[];

/** The `data` of every `config.invalid` the kit throws. */
export interface OptionErrorData {
  /** What was being configured, as the message starts: a factory (`httpTool "fetch_page"`), a command (`keel run`). */
  where: string;
  /** The top-level option at fault (`headers`), or `options` for the options object itself. */
  option: string;
  /** The option's path within the options object (see {@link OptionPath}); `[option]` unless deeper. */
  path: OptionPath;
}

/** What {@link optionError} needs. */
export interface OptionErrorInput {
  /** What was being configured; the message starts with it (`where: message`). */
  where: string;
  /**
   * The option at fault. A dotted or indexed label (`limits.cpuSeconds`, `command[2]`) is read as a path when `path`
   * is not given, and its first part is the option.
   */
  option: string;
  /** The option's path within the options object. Defaults to the parts of `option`. */
  path?: OptionPath;
  /** What is wrong and what to write instead (`timeoutMs must be an integer from 1 to 60000, got 0`). */
  message: string;
  /** Advice beyond the message, shown by the CLI. */
  guidance?: string;
  /** More data to carry beside `where`, `option` and `path`. */
  data?: Record<string, JsonValue>;
  /** The error that caused the refusal, if any. */
  cause?: unknown;
  /** Start the message with `where: `. Defaults to true (false when the message names `where` itself). */
  prefixWhere?: boolean;
}

/**
 * A `config.invalid` {@link KeelError} whose message is `where: message` and whose data is {@link OptionErrorData}.
 *
 * @example
 *   throw optionError({ where: 'httpTool "fetch_page"', option: 'headers', path: ['headers', 'x-api-key'],
 *     message: 'headers.x-api-key must be a string' });
 */
export function optionError(input: OptionErrorInput): KeelError {
  const path = input.path ?? optionPathOf(input.option);
  const option = typeof path[0] === 'string' ? path[0] : input.option;
  const message = input.prefixWhere === false ? input.message : `${input.where}: ${input.message}`;
  return new KeelError('config.invalid', message, {
    data: {
      ...input.data,
      where: input.where,
      option: path.length === 0 ? input.option : option,
      path: [...path],
    },
    ...(input.guidance === undefined ? {} : { guidance: input.guidance }),
    ...(input.cause === undefined ? {} : { cause: input.cause }),
  });
}

/** Throws {@link optionError}: for checks written as statements (`if (bad) throwOptionError({ ... })`). */
export function throwOptionError(input: OptionErrorInput): never {
  throw optionError(input);
}

/** The parts of an option label: `limits.cpuSeconds` -> `['limits', 'cpuSeconds']`, `command[2][3]` -> `['command', 2, 3]`. */
export function optionPathOf(label: string): OptionPath {
  if (label === 'options' || label === '') return [];
  const parts: (string | number)[] = [];
  for (const match of label.matchAll(/\[(\d+)\]|([^.[\]]+)/g)) {
    parts.push(match[1] === undefined ? match[2]! : Number(match[1]));
  }
  return parts.length === 0 ? [label] : parts;
}

/** A path as one reads it in a message: `['tools', 2, 'command', 'argv', 3]` -> `tools[2].command.argv[3]`. */
export function optionPathText(path: OptionPath): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? part : `.${part}`;
  return text;
}

/** The data of a `config.invalid` error from the kit, or undefined when `error` carries none (read, never parsed). */
export function optionErrorData(error: unknown): OptionErrorData | undefined {
  if (!KeelError.isInstance(error) || error.code !== 'config.invalid') return undefined;
  const { where, option, path } = error.data;
  if (typeof where !== 'string' || typeof option !== 'string' || !Array.isArray(path)) return undefined;
  if (!path.every((part) => typeof part === 'string' || typeof part === 'number')) return undefined;
  return { where, option, path: path as (string | number)[] };
}

/** A short description of a refused value for a message: strings quoted, objects by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
