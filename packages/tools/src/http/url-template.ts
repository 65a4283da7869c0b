import { KeelError } from '@keel/core';
import { optionError } from '@keel/core/adapter';
import { type Placeholder, parseTemplate, placeholderText, type TemplatePart } from '../template.js';

/** A URL template checked once, when the tool is made. */
export interface UrlTemplate {
  /** `https://host:port`, fixed: placeholders never reach the scheme, host or port. */
  readonly origin: string;
  /** The path and query of the template, such as `/items/{id}?expand={expand}`. */
  readonly rest: readonly TemplatePart[];
  /** Extra query parameters, each a template; one whose placeholders have no value is left out. */
  readonly query: readonly (readonly [string, readonly TemplatePart[]])[];
  readonly placeholders: readonly Placeholder[];
}

/**
 * Parses `url` (an absolute `http:` or `https:` URL whose path and query may hold placeholders) and `query` (a
 * record of parameter templates). Placeholders in the scheme, host or port, credentials in the URL, and a path that
 * is not already in its encoded form are `config.invalid`.
 */
export function parseUrlTemplate(url: unknown, query: unknown, where: string): UrlTemplate {
  const match = typeof url === 'string' ? /^(https?):\/\/([^/?#]+)([^#]*)$/i.exec(url) : null;
  if (match === null) {
    throw optionError({
      where,
      option: 'url',
      message: `url must be an absolute http: or https: URL without a fragment, such as 'https://api.example.com/items/{id}', got ${JSON.stringify(url)}`,
    });
  }
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  if (/[{}@]/.test(authority)) {
    throw optionError({
      where,
      option: 'url',
      message: `the URL's host and port must be fixed (no placeholder) and carry no credentials (pass them in headers)`,
    });
  }
  const origin = new URL(`${scheme}://${authority}`).origin;
  const parsedRest = parseTemplate(rest === '' ? '/' : rest, { where, path: ['url'] });
  // A placeholder is filled with unreserved characters: the literal text must parse to itself for the check on
  // filled paths (no dot segment, nothing normalised) to hold.
  const sample = fill(parsedRest, () => 'x');
  if (`${new URL(origin + sample).pathname}${new URL(origin + sample).search}` !== sample) {
    throw optionError({
      where,
      option: 'url',
      message: `the URL's path and query must be written in their encoded form (percent-encode spaces and non-ASCII characters, no "." or ".." segments)`,
    });
  }
  if (query !== undefined && (typeof query !== 'object' || query === null || Array.isArray(query))) {
    throw optionError({
      where,
      option: 'query',
      message: `query must be an object such as { q: '{query}', limit: '10' }`,
    });
  }
  const parsedQuery = Object.entries((query ?? {}) as Record<string, unknown>).map(([name, value]) => {
    if (typeof value !== 'string') {
      throw optionError({
        where,
        option: 'query',
        path: ['query', name],
        message: `query.${name} must be a string template`,
      });
    }
    return [name, parseTemplate(value, { where, path: ['query', name] })] as const;
  });
  const placeholders = [...parsedRest, ...parsedQuery.flatMap(([, parts]) => parts)].filter(
    (part): part is Placeholder => typeof part !== 'string',
  );
  return { origin, rest: parsedRest, query: parsedQuery, placeholders };
}

/**
 * The URL for one call. Values are percent-encoded (`encodeURIComponent` and `!'()*`), so a value cannot add a path segment, a
 * query parameter or a fragment; a value that would still change the path (a whole `.` or `..` segment) is
 * `tool.invalid_input`, as is a path placeholder without a value.
 */
export function buildUrl(template: UrlTemplate, input: unknown): URL {
  const rest = fill(template.rest, (name) => {
    const value = placeholderText(input, name);
    if (value === undefined) {
      throw new KeelError('tool.invalid_input', `"${name}" is required to build the URL`, {
        data: { field: name },
        guidance: `Provide a value for "${name}"`,
      });
    }
    return encode(value, name);
  });
  const url = new URL(template.origin + rest);
  if (`${url.pathname}${url.search}` !== rest) {
    throw new KeelError(
      'tool.invalid_input',
      'A value would change the URL path ("." and ".." are not accepted)',
      {
        guidance: 'Give identifiers, not path segments such as "." or ".."',
      },
    );
  }
  const parameters: string[] = [];
  for (const [name, parts] of template.query) {
    let value = '';
    let complete = true;
    for (const part of parts) {
      const text = typeof part === 'string' ? part : placeholderText(input, part.name);
      if (text === undefined) complete = false;
      else value += text;
    }
    if (complete) parameters.push(`${encode(name, name)}=${encode(value, name)}`);
  }
  if (parameters.length > 0)
    url.search = `${url.search === '' ? '' : `${url.search.slice(1)}&`}${parameters.join('&')}`;
  return url;
}

function fill(parts: readonly TemplatePart[], value: (name: string) => string): string {
  return parts.map((part) => (typeof part === 'string' ? part : value(part.name))).join('');
}

/** `encodeURIComponent`, plus the reserved characters it leaves (`!'()*`), so a URL parser never re-encodes it. */
function encode(value: string, field: string): string {
  try {
    return encodeURIComponent(value).replace(
      /[!'()*]/g,
      (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  } catch (error) {
    throw new KeelError(
      'tool.invalid_input',
      `The value of "${field}" is not valid text (a lone surrogate)`,
      {
        data: { field },
        cause: error,
      },
    );
  }
}
