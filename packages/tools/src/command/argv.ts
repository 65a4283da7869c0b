import { KeelError } from '@keel/core';
import { type OptionPath, optionError, optionPathText } from '@keel/core/adapter';
import { type Placeholder, parseTemplate, placeholderText, type TemplatePart } from '../template.js';

/**
 * A command line: the program, then its arguments. Each argument is a template (`'-n'`, `'{count}'`,
 * `'--format={format}'`), or an array of templates forming an optional group that is left out as a whole when one of
 * its placeholders has no value (`['--author', '{author}']`).
 */
export type CommandTemplate = readonly (string | readonly string[])[];

/** The placeholder kinds an argument accepts: `{name:path}` and `{name:allow-dash}`. */
export const ARGUMENT_KINDS = ['path', 'allow-dash'] as const;

interface ArgumentTemplate {
  readonly parts: readonly TemplatePart[];
  /** Whether a literal `--` came before: the program reads no options after it. */
  readonly afterEndOfOptions: boolean;
}

type Element =
  | { readonly kind: 'argument'; readonly argument: ArgumentTemplate }
  | { readonly kind: 'group'; readonly arguments: readonly ArgumentTemplate[] };

/** A {@link CommandTemplate} checked and parsed once, when the tool is made. */
export interface ParsedCommand {
  /** The program, as written: a name looked up on PATH, or a path. Never a placeholder. */
  readonly program: string;
  readonly elements: readonly Element[];
  readonly placeholders: readonly Placeholder[];
}

/** Resolves a `{name:path}` value to the path the program is given. */
export type PathResolver = (value: string, field: string) => Promise<string>;

/** Parses and checks a command template; `config.invalid` says what is wrong with it. */
export function parseCommand(command: unknown, where: string): ParsedCommand {
  if (!Array.isArray(command) || command.length === 0) {
    throw optionError({
      where,
      option: 'command',
      path: ['command'],
      message: `command must be a non-empty array such as ['git', 'log', '-n', '{count}']`,
    });
  }
  const [program, ...rest] = command as unknown[];
  if (typeof program !== 'string' || program === '' || /[{}\0]/.test(program)) {
    throw optionError({
      where,
      option: 'command',
      path: ['command', 0],
      message: `command[0] must be the program as a fixed, non-empty string (the model never chooses the program), got ${JSON.stringify(program)}`,
    });
  }
  const placeholders: Placeholder[] = [];
  let afterEndOfOptions = false;
  const parseArgument = (value: unknown, position: OptionPath): ArgumentTemplate => {
    if (typeof value !== 'string' || value.includes('\0')) {
      throw optionError({
        where,
        option: 'command',
        path: position,
        message: `${optionPathText(position)} must be a string without NUL bytes, got ${JSON.stringify(value) ?? String(value)}`,
      });
    }
    const parts = parseTemplate(value, { where, path: position }, ARGUMENT_KINDS);
    for (const part of parts) if (typeof part !== 'string') placeholders.push(part);
    return { parts, afterEndOfOptions };
  };
  const elements: Element[] = rest.map((value, index): Element => {
    const position: OptionPath = ['command', index + 1];
    if (!Array.isArray(value)) {
      const argument = parseArgument(value, position);
      if (value === '--') afterEndOfOptions = true;
      return { kind: 'argument', argument };
    }
    const group = value.map((item, inner) => parseArgument(item, [...position, inner]));
    if (!group.some((argument) => argument.parts.some((part) => typeof part !== 'string'))) {
      throw optionError({
        where,
        option: 'command',
        path: position,
        message: `${optionPathText(position)} is an optional group without a placeholder, so it would always be kept; write its arguments inline`,
      });
    }
    return { kind: 'group', arguments: group };
  });
  return { program, elements, placeholders };
}

/**
 * The argument vector for one call. Each placeholder's value lands inside exactly one argument, whatever characters
 * it holds (no shell ever reads it). Refused with `tool.invalid_input`:
 * - a value with a NUL byte;
 * - a missing value outside an optional group;
 * - a value starting with `-` at the start of an argument (it would be read as an option), unless the placeholder is
 *   `{name:allow-dash}` or a literal `--` came earlier in the command.
 * `{name:path}` values go through `resolvePath` (confinement) and are passed as the absolute path it returns.
 */
export async function buildArguments(
  command: ParsedCommand,
  input: unknown,
  resolvePath: PathResolver,
): Promise<string[]> {
  const argv: string[] = [];
  for (const element of command.elements) {
    if (element.kind === 'argument') {
      const filled = await fillArgument(element.argument, input, resolvePath);
      if (typeof filled !== 'string') throw missingValue(filled.missing);
      argv.push(filled);
      continue;
    }
    const group: string[] = [];
    for (const argument of element.arguments) {
      const filled = await fillArgument(argument, input, resolvePath);
      if (typeof filled !== 'string') break;
      group.push(filled);
    }
    if (group.length === element.arguments.length) argv.push(...group);
  }
  return argv;
}

/** One argument, or the name of its first placeholder without a value. */
async function fillArgument(
  argument: ArgumentTemplate,
  input: unknown,
  resolvePath: PathResolver,
): Promise<string | { missing: string }> {
  let text = '';
  for (const part of argument.parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    const value = placeholderText(input, part.name);
    if (value === undefined) return { missing: part.name };
    if (value.includes('\0')) {
      throw new KeelError('tool.invalid_input', `The value of "${part.name}" contains a NUL byte`, {
        data: { field: part.name },
      });
    }
    if (part.kind === 'path') {
      text += await resolvePath(value, part.name);
      continue;
    }
    if (text === '' && value.startsWith('-') && part.kind !== 'allow-dash' && !argument.afterEndOfOptions) {
      throw new KeelError(
        'tool.invalid_input',
        `The value of "${part.name}" starts with "-", so the program would read it as an option; this argument takes a plain value`,
        {
          data: { field: part.name },
          guidance: `Give "${part.name}" a value that does not start with "-"`,
        },
      );
    }
    text += value;
  }
  return text;
}

function missingValue(name: string): KeelError {
  return new KeelError('tool.invalid_input', `"${name}" is required by this command`, {
    data: { field: name },
    guidance: `Provide a value for "${name}"`,
  });
}
