import { KeelError } from '@keel/core';
import { type OptionPath, optionError, optionPathText } from '@keel/core/adapter';

/** A `{name}` or `{name:kind}` slot in a template, filled from the tool's input property `name`. */
export interface Placeholder {
  readonly name: string;
  /** What follows the colon, such as `path`; undefined for a plain `{name}`. */
  readonly kind: string | undefined;
  /** Where the template holding it sits in the tool's options (`['command', 2]`, `['headers', 'authorization']`). */
  readonly path?: OptionPath;
}

/** Where a template sits: the factory (`commandTool "git_log"`) and the template's path in its options. */
export interface TemplateSite {
  readonly where: string;
  readonly path: OptionPath;
}

/** A parsed template: literal text and placeholders, in order. */
export type TemplatePart = string | Placeholder;

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z][a-z-]*))?\}/;

/**
 * Parses a template such as `--max-count={count}` or `/items/{id}`. `{name}` and `{name:kind}` are placeholders;
 * `{{` and `}}` are literal braces, and so is any other brace (a shell function body or an awk program keeps its
 * braces, as long as none of them reads like a placeholder). Kinds other than `kinds` are a `config.invalid` error.
 */
export function parseTemplate(
  text: string,
  site: TemplateSite,
  kinds: readonly string[] = [],
): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  let index = 0;
  while (index < text.length) {
    const character = text[index]!;
    if ((character === '{' || character === '}') && text[index + 1] === character) {
      literal += character;
      index += 2;
      continue;
    }
    const match = character === '{' ? PLACEHOLDER.exec(text.slice(index)) : null;
    if (match === null) {
      literal += character;
      index++;
      continue;
    }
    const kind = match[2];
    if (kind !== undefined && !kinds.includes(kind)) {
      const known = kinds.length === 0 ? 'none are accepted here' : `known: ${kinds.join(', ')}`;
      throw optionError({
        where: site.where,
        option: String(site.path[0]),
        path: site.path,
        message: `${site.where} ${optionPathText(site.path)}: unknown placeholder kind "${kind}" in ${JSON.stringify(text)} (${known})`,
        prefixWhere: false,
      });
    }
    if (literal !== '') parts.push(literal);
    literal = '';
    parts.push({ name: match[1]!, kind, path: site.path });
    index += match[0].length;
  }
  if (literal !== '' || parts.length === 0) parts.push(literal);
  return parts;
}

/** The placeholders of a parsed template. */
export function placeholdersOf(parts: readonly TemplatePart[]): Placeholder[] {
  return parts.filter((part): part is Placeholder => typeof part !== 'string');
}

/**
 * Throws `config.invalid` when a placeholder names no property of the input schema, so a template and its schema
 * cannot drift apart unnoticed. Schemas without `properties` (a Standard Schema keel could not convert) are not
 * checked.
 */
export function checkPlaceholderNames(
  placeholders: readonly Placeholder[],
  inputSchema: { readonly properties?: unknown },
  where: string,
): void {
  const properties = inputSchema.properties;
  if (typeof properties !== 'object' || properties === null) return;
  for (const { name, path } of placeholders) {
    if (!Object.hasOwn(properties, name)) {
      throw optionError({
        where,
        option: path === undefined ? 'input' : String(path[0]),
        path: path ?? ['input'],
        message: `placeholder {${name}} names no property of the input schema (properties: ${Object.keys(properties).join(', ') || 'none'})`,
      });
    }
  }
}

/**
 * The text an input value fills a placeholder with: strings as they are, finite numbers, booleans and bigints as
 * their decimal text; undefined for `undefined` and `null` (no value). Objects, arrays and non-finite numbers are a
 * `tool.invalid_input` error the model can correct.
 */
export function placeholderText(input: unknown, name: string): string | undefined {
  const value =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
      return value;
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'number':
      if (Number.isFinite(value)) return String(value);
      break;
    case 'object':
      if (value === null) return undefined;
      break;
  }
  throw new KeelError(
    'tool.invalid_input',
    `The value of "${name}" must be a string, a finite number or a boolean`,
    { data: { field: name } },
  );
}
