import { KeelError, type ToolContext } from '@keel/core';
import { parseTemplate, placeholderText, type TemplatePart } from '../template.js';
import { stringRecordOption } from '../validate.js';

/** Computes request headers for a call (the hook where trace context such as `traceparent` can be added). */
export type HeadersHook<Input> = (
  input: Input,
  context: ToolContext,
) => Record<string, string> | Promise<Record<string, string>>;

/** A token as RFC 9110 allows for a header name. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The `headers` option, parsed: a hook, or each header's name (lower case) and value template. */
export type HeaderTemplates<Input> = HeadersHook<Input> | (readonly [string, readonly TemplatePart[]])[];

/** Parses the `headers` option; `config.invalid` for a name that is not a header name or a value that is not text. */
export function headerTemplates<Input>(value: unknown, where: string): HeaderTemplates<Input> {
  if (typeof value === 'function') return value as HeadersHook<Input>;
  const record = stringRecordOption(value, {
    where,
    option: 'headers',
    checkKey: (name) => HEADER_NAME.test(name),
  });
  return Object.entries(record).map(([name, text]) => [
    name.toLowerCase(),
    parseTemplate(text, { where, path: ['headers', name] }),
  ]);
}

/**
 * The request headers of one call: `accept` and `user-agent` defaults, then the tool's headers (a template's header
 * is left out when a placeholder has no value). A value with a line break or NUL is `tool.invalid_input`: it would
 * add a header of the model's choosing.
 */
export async function buildHeaders<Input>(
  templates: HeaderTemplates<Input>,
  input: Input,
  context: ToolContext,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    accept: 'application/json, text/*;q=0.9, */*;q=0.8',
    'user-agent': 'keel-tools',
  };
  const entries =
    typeof templates === 'function'
      ? Object.entries(await templates(input, context))
      : templates.map(([name, parts]) => [name, fillHeader(parts, input)] as const);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new KeelError('tool.invalid_input', `The value of header ${name} must be text on one line`, {
        data: { header: name },
      });
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** A header's value, or undefined (the header is left out) when one of its placeholders has no value. */
function fillHeader(parts: readonly TemplatePart[], input: unknown): string | undefined {
  let text = '';
  for (const part of parts) {
    const value = typeof part === 'string' ? part : placeholderText(input, part.name);
    if (value === undefined) return undefined;
    text += value;
  }
  return text;
}

/** Headers whose value is never a secret: they follow a redirect to another origin and are not redacted from echoes. */
export const PLAIN_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
]);

/**
 * The values of a call's headers that may be secrets, to redact from what the endpoint sends back: every header but
 * {@link PLAIN_HEADERS} and `exclude` (the idempotency key), except a template's header whose value holds a
 * placeholder (the model's input, not a secret). A hook's headers are all counted: it is where credentials come from.
 */
export function secretHeaderValues<Input>(
  templates: HeaderTemplates<Input>,
  headers: Readonly<Record<string, string>>,
  exclude: string | false,
): string[] {
  const filled =
    typeof templates === 'function'
      ? new Set<string>()
      : new Set(
          templates
            .filter(([, parts]) => parts.some((part) => typeof part !== 'string'))
            .map(([name]) => name),
        );
  return Object.entries(headers)
    .filter(
      ([name]) =>
        !PLAIN_HEADERS.has(name) &&
        !filled.has(name) &&
        (exclude === false || name !== exclude.toLowerCase()),
    )
    .map(([, value]) => value);
}
