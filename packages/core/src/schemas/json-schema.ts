import type { ValidationIssue } from '../spec/tool.js';
import { appendPath } from './json-path.js';
import { compilePattern } from './schema-pattern.js';
import { checkNumber, checkString } from './schema-scalars.js';

/** A JSON Schema, or the boolean schemas `true` (anything) and `false` (nothing). */
type Schema = { readonly [key: string]: unknown } | boolean;

const MAX_SCHEMA_DEPTH = 64;
const ALTERNATIVE_PREVIEW = 3;

/** Options of {@link validateJsonSchema}. */
export interface JsonSchemaValidationOptions {
  /** Stops after this many issues. Defaults to 20. */
  maxIssues?: number;
}

interface State {
  readonly root: Schema;
  readonly issues: ValidationIssue[];
  readonly maxIssues: number;
}

/**
 * Validates a JSON value against the subset of JSON Schema that tool inputs and structured outputs use: `type`
 * (one or a list, `integer` included), `nullable` (OpenAPI), `enum`, `const`, `properties`, `required`,
 * `additionalProperties`, `patternProperties`, `minProperties`/`maxProperties`, `items` (schema or tuple),
 * `prefixItems`, `additionalItems`, `minItems`/`maxItems`, `uniqueItems`, `minLength`/`maxLength` (in code points),
 * `pattern`, `minimum`/`maximum`, `exclusiveMinimum`/`exclusiveMaximum`, `multipleOf`, `allOf`/`anyOf`/`oneOf`/`not`
 * and local `$ref` (`#/$defs/...`, `#/definitions/...`). Other keywords (`format`, `if`, ...) are ignored.
 *
 * Returns the issues found, each with a JSON path such as `$.city` or `$.stops[2].name`; none means valid.
 *
 * @example
 *   validateJsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, {});
 *   // [{ path: '$.city', message: 'required property is missing' }]
 */
export function validateJsonSchema(
  schema: Schema,
  value: unknown,
  options: JsonSchemaValidationOptions = {},
): ValidationIssue[] {
  const state: State = { root: schema, issues: [], maxIssues: Math.max(1, options.maxIssues ?? 20) };
  check(schema, value, '$', state, 0);
  return state.issues;
}

function report(state: State, path: string, message: string): void {
  if (state.issues.length < state.maxIssues) state.issues.push({ path, message });
}

function full(state: State): boolean {
  return state.issues.length >= state.maxIssues;
}

function check(schema: Schema, value: unknown, path: string, state: State, depth: number): void {
  if (schema === true) return;
  if (schema === false) {
    report(state, path, 'no value is allowed here');
    return;
  }
  if (typeof schema !== 'object' || schema === null) return;
  if (depth > MAX_SCHEMA_DEPTH) {
    report(state, path, `schema nesting deeper than ${MAX_SCHEMA_DEPTH} levels`);
    return;
  }
  if (typeof schema.$ref === 'string') {
    const target = resolveReference(state.root, schema.$ref);
    if (target === undefined) {
      report(state, path, `schema reference ${schema.$ref} cannot be resolved`);
      return;
    }
    check(target, value, path, state, depth + 1);
  }
  if (value === null && schema.nullable === true) return;
  if (!checkType(schema, value, path, state)) return;

  if (Array.isArray(schema.enum) && !schema.enum.some((option) => deepEqual(option, value))) {
    const options = schema.enum.slice(0, 10).map((option) => JSON.stringify(option));
    report(state, path, `must be one of ${options.join(', ')}${schema.enum.length > 10 ? ', ...' : ''}`);
  }
  if ('const' in schema && !deepEqual(schema.const, value)) {
    report(state, path, `must be equal to ${JSON.stringify(schema.const)}`);
  }
  const problems =
    typeof value === 'string'
      ? checkString(schema, value)
      : typeof value === 'number'
        ? checkNumber(schema, value)
        : [];
  for (const problem of problems) report(state, path, problem);
  if (Array.isArray(value)) checkArray(schema, value, path, state, depth);
  else if (isPlainObject(value)) checkObject(schema, value, path, state, depth);
  checkCombinators(schema, value, path, state, depth);
}

function checkType(
  schema: { readonly [key: string]: unknown },
  value: unknown,
  path: string,
  state: State,
): boolean {
  const declared = schema.type;
  if (declared === undefined) return true;
  const types = (Array.isArray(declared) ? declared : [declared]).filter((type) => typeof type === 'string');
  if (types.length === 0 || types.some((type) => hasType(value, type))) return true;
  if (value === null && schema.nullable === true) return true;
  report(state, path, `expected ${types.join(' or ')}, received ${describeType(value)}`);
  return false;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    default:
      return false;
  }
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function checkArray(
  schema: { readonly [key: string]: unknown },
  value: readonly unknown[],
  path: string,
  state: State,
  depth: number,
): void {
  const { minItems, maxItems, uniqueItems, items, prefixItems, additionalItems } = schema;
  if (typeof minItems === 'number' && value.length < minItems) {
    report(state, path, `must have at least ${minItems} items (has ${value.length})`);
  }
  if (typeof maxItems === 'number' && value.length > maxItems) {
    report(state, path, `must have at most ${maxItems} items (has ${value.length})`);
  }
  if (uniqueItems === true) {
    const duplicate = value.findIndex((item, index) =>
      value.slice(0, index).some((other) => deepEqual(other, item)),
    );
    if (duplicate >= 0)
      report(state, path, `items must be unique (item ${duplicate} repeats an earlier one)`);
  }
  // Draft 2020-12 names tuples `prefixItems`; draft 7 uses an array under `items`.
  const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined;
  const rest = Array.isArray(items) ? additionalItems : items;
  for (let index = 0; index < value.length && !full(state); index++) {
    const itemSchema = tuple !== undefined && index < tuple.length ? tuple[index] : rest;
    if (isSchema(itemSchema)) check(itemSchema, value[index], `${path}[${index}]`, state, depth + 1);
  }
}

function checkObject(
  schema: { readonly [key: string]: unknown },
  value: Readonly<Record<string, unknown>>,
  path: string,
  state: State,
  depth: number,
): void {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const patterns = isPlainObject(schema.patternProperties) ? Object.entries(schema.patternProperties) : [];
  if (Array.isArray(schema.required)) {
    for (const name of schema.required) {
      if (typeof name === 'string' && !Object.hasOwn(value, name)) {
        report(state, appendPath(path, name), 'required property is missing');
      }
    }
  }
  const keys = Object.keys(value);
  if (typeof schema.minProperties === 'number' && keys.length < schema.minProperties) {
    report(state, path, `must have at least ${schema.minProperties} properties`);
  }
  if (typeof schema.maxProperties === 'number' && keys.length > schema.maxProperties) {
    report(state, path, `must have at most ${schema.maxProperties} properties`);
  }
  for (const key of keys) {
    if (full(state)) return;
    const propertyPath = appendPath(path, key);
    let known = false;
    if (Object.hasOwn(properties, key)) {
      known = true;
      const propertySchema = properties[key];
      if (isSchema(propertySchema)) check(propertySchema, value[key], propertyPath, state, depth + 1);
    }
    for (const [pattern, patternSchema] of patterns) {
      const expression = compilePattern(pattern);
      if (typeof expression !== 'string' && expression.test(key)) {
        known = true;
        if (isSchema(patternSchema)) check(patternSchema, value[key], propertyPath, state, depth + 1);
      }
    }
    if (known) continue;
    const additional = schema.additionalProperties;
    if (additional === false) report(state, propertyPath, `unexpected property "${key}" (not in the schema)`);
    else if (isSchema(additional)) check(additional, value[key], propertyPath, state, depth + 1);
  }
}

function checkCombinators(
  schema: { readonly [key: string]: unknown },
  value: unknown,
  path: string,
  state: State,
  depth: number,
): void {
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) if (isSchema(part)) check(part, value, path, state, depth + 1);
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[keyword];
    if (!Array.isArray(alternatives)) continue;
    const outcomes = alternatives
      .filter(isSchema)
      .map((alternative) => trial(alternative, value, path, state, depth));
    const matching = outcomes.filter((issues) => issues.length === 0).length;
    if (matching === 0 && outcomes.length > 0) {
      const reasons = outcomes
        .slice(0, ALTERNATIVE_PREVIEW)
        .map(
          (issues, index) =>
            `(${index + 1}) ${issues[0]!.path === path ? '' : `${issues[0]!.path} `}${issues[0]!.message}`,
        );
      const more = outcomes.length > ALTERNATIVE_PREVIEW ? '; ...' : '';
      report(
        state,
        path,
        `does not match any of the ${outcomes.length} allowed shapes: ${reasons.join('; ')}${more}`,
      );
    } else if (keyword === 'oneOf' && matching > 1) {
      report(state, path, `matches ${matching} of the allowed shapes, but must match exactly one`);
    }
  }
  if (isSchema(schema.not) && trial(schema.not, value, path, state, depth).length === 0) {
    report(state, path, 'must not match the excluded schema');
  }
}

function trial(schema: Schema, value: unknown, path: string, state: State, depth: number): ValidationIssue[] {
  const inner: State = { root: state.root, issues: [], maxIssues: 1 };
  check(schema, value, path, inner, depth + 1);
  return inner.issues;
}

function resolveReference(root: Schema, reference: string): Schema | undefined {
  if (!reference.startsWith('#')) return undefined;
  let target: unknown = root;
  const pointer = decodeURIComponent(reference.slice(1));
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof target !== 'object' || target === null || !Object.hasOwn(target, key)) return undefined;
    target = (target as Record<string, unknown>)[key];
  }
  return isSchema(target) ? target : undefined;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'boolean' || isPlainObject(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => deepEqual(item, right[index]));
  }
  const leftKeys = Object.keys(left);
  const rightRecord = right as Record<string, unknown>;
  return (
    leftKeys.length === Object.keys(right).length &&
    leftKeys.every(
      (key) =>
        Object.hasOwn(rightRecord, key) &&
        deepEqual((left as Record<string, unknown>)[key], rightRecord[key]),
    )
  );
}
