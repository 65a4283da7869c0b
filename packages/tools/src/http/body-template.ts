import { KeelError } from '@keel/core';
import { type OptionPath, optionError, optionPathText } from '@keel/core/adapter';
import { type Placeholder, parseTemplate, placeholderText, type TemplatePart } from '../template.js';

/** Builds a request body from the validated input. */
export type BodyBuilder = (input: unknown) => unknown;

/**
 * Compiles a JSON body template: objects, arrays and plain values are sent as they are, except strings, which are
 * templates. A string that is exactly one placeholder (`'{tags}'`) becomes the input's value with its JSON type (an
 * array stays an array; a property whose value is missing is left out); a placeholder inside text (`'Bug: {title}'`)
 * is filled as text. A function is called with the input instead. Anything else is `config.invalid`.
 */
export function compileBody(
  body: unknown,
  where: string,
): { build: BodyBuilder; placeholders: readonly Placeholder[] } {
  if (typeof body === 'function') return { build: (input) => body(input), placeholders: [] };
  const placeholders: Placeholder[] = [];
  const compile = (value: unknown, path: OptionPath): BodyBuilder => {
    if (typeof value === 'string') {
      const parts = parseTemplate(value, { where, path });
      const found = parts.filter((part): part is Placeholder => typeof part !== 'string');
      placeholders.push(...found);
      if (found.length === 0) return () => value;
      if (parts.length === 1) {
        const { name } = found[0]!;
        return (input) => (input as Record<string, unknown>)[name];
      }
      return (input) => interpolate(parts, input);
    }
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return () => value;
    if (Array.isArray(value)) {
      const items = value.map((item, index) => compile(item, [...path, index]));
      return (input) => items.map((item) => item(input) ?? null);
    }
    if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      const entries = Object.entries(value).map(
        ([key, item]) => [key, compile(item, [...path, key])] as const,
      );
      return (input) => {
        const result: Record<string, unknown> = {};
        for (const [key, item] of entries) {
          const built = item(input);
          if (built !== undefined) result[key] = built;
        }
        return result;
      };
    }
    throw optionError({
      where,
      option: 'body',
      path,
      message: `${optionPathText(path)} must be JSON (an object, array, string, number, boolean or null) or a function of the input`,
    });
  };
  return { build: compile(body, ['body']), placeholders };
}

function interpolate(parts: readonly TemplatePart[], input: unknown): string {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    const value = placeholderText(input, part.name);
    if (value === undefined) {
      throw new KeelError('tool.invalid_input', `"${part.name}" is required to build the request body`, {
        data: { field: part.name },
      });
    }
    text += value;
  }
  return text;
}
