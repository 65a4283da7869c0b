import type { JsonValue } from '@keel/core';
import type { JsonSchema } from '@keel/core/adapter';
import { properNouns, words } from './words.js';

/** Where {@link valueFromSchema} takes its values from. */
export interface SchemaValueContext {
  /** The user's task: names, numbers, dates, addresses and queries are taken from it. */
  task: string;
  /** Text for answer-like fields (`answer`, `summary`, `result`, ...). Defaults to `task`. */
  answer?: string;
  /** 0 picks the best candidate; 1 the next, and so on (used to correct a failed call). Defaults to 0. */
  variant?: number;
  /** Fill optional properties too, as JSON output needs; otherwise only required ones. Defaults to false. */
  allProperties?: boolean;
  /** A path property's value when the task spells no path (a listing tool lists `.`). Defaults to `README.md`. */
  defaultPath?: string;
}

const MAX_DEPTH = 8;
const ENTITY =
  /city|country|location|place|town|region|state|name|person|company|destination|origin|team|user/;
const QUERY = /query|question|prompt|text|input|message|content|search|topic|task|request|keyword|term|^q$/;
const ANSWER = /answer|summary|result|response|output|reply|explanation|description|reason|conclusion/;

/**
 * A value that satisfies `schema`, built deterministically from the words of a task: a `city` gets a proper noun of
 * the task, a `query` the task itself, a number the task's first number, an enum the option the task mentions.
 * `$ref`s into the same schema are followed; recursion stops at depth 8.
 *
 * @example
 *   valueFromSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
 *     { task: 'What is the weather in Paris?' }); // { city: 'Paris' }
 */
export function valueFromSchema(schema: JsonSchema, context: SchemaValueContext): JsonValue {
  return build(schema, context, schema, '', 0);
}

/** A value for the property `name` of an object, which steers the choice (a `city` gets a proper noun). */
export function valueForProperty(name: string, schema: JsonSchema, context: SchemaValueContext): JsonValue {
  return build(schema, context, schema, name, 0);
}

/**
 * Arguments for a tool whose input schema is `schema`: its required properties, filled from `task`. `defaultPath` is
 * the value of a path property when the task spells no path (defaults to `README.md`).
 */
export function argumentsFromSchema(
  schema: JsonSchema,
  task: string,
  variant = 0,
  defaultPath?: string,
): Record<string, JsonValue> {
  const value = build(
    schema,
    { task, variant, ...(defaultPath === undefined ? {} : { defaultPath }) },
    schema,
    '',
    0,
  );
  return isRecord(value) ? value : {};
}

/** Whether a required string property of the object `schema` names an entity (a city, a person, a company...). */
export function hasEntityProperty(schema: JsonSchema): boolean {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return required.some((key) => {
    const property = typeof key === 'string' ? properties[key] : undefined;
    return isRecord(property) && primaryType(property) === 'string' && ENTITY.test(String(key).toLowerCase());
  });
}

/** Whether `value` has the JSON type `schema` asks for (shallow: nested objects are not checked). */
export function matchesType(schema: JsonSchema, value: JsonValue | undefined): boolean {
  const type = primaryType(schema);
  if (value === undefined) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => option === value)) return false;
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/** The single type a schema asks for, guessed from `properties`, `items` or `enum` when `type` is absent. */
export function primaryType(schema: JsonSchema): string | undefined {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const first = type.find((entry) => entry !== 'null');
    return typeof first === 'string' ? first : 'null';
  }
  if (isRecord(schema.properties)) return 'object';
  if (isRecord(schema.items)) return 'array';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return typeof schema.enum[0];
  return undefined;
}

function build(
  schema: JsonSchema,
  context: SchemaValueContext,
  root: JsonSchema,
  name: string,
  depth: number,
): JsonValue {
  if (depth > MAX_DEPTH) return null;
  const resolved = resolve(schema, root);
  if (resolved.const !== undefined) return resolved.const;
  const variant = context.variant ?? 0;
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0)
    return pickEnum(resolved.enum, context.task, variant);
  if (resolved.default !== undefined && variant === 0) return resolved.default;
  const alternatives = resolved.anyOf ?? resolved.oneOf ?? resolved.allOf;
  if (Array.isArray(alternatives)) {
    const first = alternatives.find((option) => isRecord(option) && option.type !== 'null');
    if (isRecord(first)) return build(first, context, root, name, depth + 1);
  }
  switch (primaryType(resolved)) {
    case 'object':
      return buildObject(resolved, context, root, depth);
    case 'array': {
      const items = isRecord(resolved.items) ? resolved.items : { type: 'string' };
      const minItems = typeof resolved.minItems === 'number' ? Math.max(1, resolved.minItems) : 1;
      return Array.from({ length: minItems }, (_, index) =>
        build(items, { ...context, variant: variant + index }, root, singular(name), depth + 1),
      );
    }
    case 'number':
    case 'integer':
      return buildNumber(resolved, context.task, variant);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return buildString(resolved, context, name);
  }
}

function namesEnumValue(schema: JsonSchema, task: string): boolean {
  if (!Array.isArray(schema.enum)) return false;
  const taskWords = new Set(words(task));
  return schema.enum.some((option) => typeof option === 'string' && taskWords.has(option.toLowerCase()));
}

function buildObject(
  schema: JsonSchema,
  context: SchemaValueContext,
  root: JsonSchema,
  depth: number,
): JsonValue {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((key) => typeof key === 'string')
    : [];
  const result: Record<string, JsonValue> = {};
  for (const [key, propertySchema] of Object.entries(properties)) {
    if (!isRecord(propertySchema)) continue;
    // An optional field is filled only when the task names one of its allowed values ("an urgent ticket").
    if (!context.allProperties && !required.includes(key) && !namesEnumValue(propertySchema, context.task))
      continue;
    result[key] = build(propertySchema, context, root, key, depth + 1);
  }
  for (const key of required) {
    if (!(key in result)) result[key] = buildString({}, context, key);
  }
  return result;
}

function buildNumber(schema: JsonSchema, task: string, variant: number): number {
  const numbers = (task.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let value = numbers[variant] ?? numbers[0] ?? minimum ?? 1;
  if (minimum !== undefined) value = Math.max(value, minimum);
  if (maximum !== undefined) value = Math.min(value, maximum);
  return primaryType(schema) === 'integer' ? Math.round(value) : value;
}

function buildString(schema: JsonSchema, context: SchemaValueContext, name: string): string {
  const lower = name.toLowerCase();
  const format = typeof schema.format === 'string' ? schema.format : '';
  const variant = context.variant ?? 0;
  const task = context.task.trim();
  let value: string;
  if (format === 'date-time') value = '2025-01-01T00:00:00Z';
  else if (format === 'date' || /date|day/.test(lower))
    value = nth(task.match(/\d{4}-\d{2}-\d{2}/g), variant) ?? '2025-01-01';
  else if (format === 'email' || lower.includes('email'))
    value = nth(task.match(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g), variant) ?? 'user@example.com';
  else if (format === 'uri' || format === 'url' || /url|uri|link|website|href/.test(lower))
    value = nth(task.match(/https?:\/\/\S+[^\s.,;:!?)]/g), variant) ?? 'https://example.com';
  else if (/path|file|dir|folder/.test(lower))
    value = nth(paths(task), variant) ?? context.defaultPath ?? 'README.md';
  else if (ANSWER.test(lower)) value = (context.answer ?? task) || 'Simulated answer.';
  else if (QUERY.test(lower)) value = task || 'query';
  else if (ENTITY.test(lower)) value = entity(task, variant);
  else value = properNouns(task)[variant] ?? (task || 'value');
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return value.padEnd(minLength, '.');
}

/** Words of `task` that look like file paths (a slash, or a file extension), e-mail addresses and URLs excluded. */
function paths(task: string): string[] {
  const tokens = task
    .split(/\s+/)
    .map((token) => token.replace(/^["'(]+|["'),;:!?]+$|\.$/g, ''))
    .filter((token) => token !== '' && !token.includes('@') && !token.includes('://'));
  return [
    ...tokens.filter((token) => token.includes('/')),
    ...tokens.filter(
      (token) => !token.includes('/') && /^[\w.-]+\.\w{1,6}$/.test(token) && !/^\d/.test(token),
    ),
  ];
}

function entity(task: string, variant: number): string {
  const nouns = properNouns(task);
  if (nouns.length > 0) return nouns[variant % nouns.length]!;
  const fallback = words(task).find((word) => word.length > 3);
  return fallback === undefined ? 'Unknown' : fallback[0]!.toUpperCase() + fallback.slice(1);
}

function pickEnum(options: JsonValue[], task: string, variant: number): JsonValue {
  const lower = task.toLowerCase();
  const mentioned = options.filter(
    (option) => typeof option === 'string' && lower.includes(option.toLowerCase()),
  );
  if (variant === 0 && mentioned.length > 0) return mentioned[0]!;
  return options[variant % options.length]!;
}

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < MAX_DEPTH && typeof current.$ref === 'string'; hops++) {
    const target = current.$ref.startsWith('#') ? pointer(root, current.$ref.slice(1)) : undefined;
    if (!isRecord(target)) return {};
    current = target;
  }
  return current;
}

function pointer(root: JsonSchema, path: string): JsonValue | undefined {
  let current: JsonValue | undefined = root;
  for (const part of path.split('/').filter(Boolean)) {
    const key = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    current = isRecord(current) ? current[key] : undefined;
  }
  return current;
}

function nth(matches: readonly string[] | null, index: number): string | undefined {
  if (matches === null || matches.length === 0) return undefined;
  return matches[index % matches.length];
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.replace(/s$/, '');
}

/** Whether `value` is a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
