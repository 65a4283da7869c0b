import { KeelError } from '../errors/keel-error.js';
import type { JsonSchema } from '../spec/model.js';
import type { ValidationIssue, ValidationResult } from '../spec/tool.js';
import { formatJsonPath } from './json-path.js';
import { validateJsonSchema } from './json-schema.js';
import { checkSchemaPattern } from './schema-pattern.js';

/**
 * A schema from any library implementing Standard Schema v1 (zod 4, valibot, arktype, ...). Declared here so that
 * core depends on none of them. Libraries that also implement Standard JSON Schema (zod 4.2 and later) expose
 * `jsonSchema`, from which keel derives the JSON Schema sent to the model.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
      readonly output: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/** What a Standard Schema's `validate` returns. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** A JSON value, readonly at every level, so that JSON Schemas written `as const` are accepted. */
export type ReadonlyJsonValue =
  | string
  | number
  | boolean
  | null
  | readonly ReadonlyJsonValue[]
  | { readonly [key: string]: ReadonlyJsonValue };

/** A JSON Schema object as a caller may write it: mutable or `as const`. keel always works on its own copy. */
export type JsonSchemaInput = { readonly [key: string]: ReadonlyJsonValue };

/** A schema keel accepts: a Standard Schema (such as a zod 4 schema) or a plain JSON Schema object. */
export type SchemaLike<Output = unknown> = StandardSchemaV1<unknown, Output> | JsonSchemaInput;

/** A schema ready for use: the JSON Schema shown to the model and the validator applied to its answers. */
export interface ResolvedSchema<Output> {
  readonly jsonSchema: JsonSchema;
  validate(value: unknown): ValidationResult<Output> | Promise<ValidationResult<Output>>;
}

/** The JSON Schema dialect asked of Standard JSON Schema libraries: draft 7 is what every provider accepts. */
const JSON_SCHEMA_TARGET = 'draft-07';
const MAX_SCHEMA_DEPTH = 64;

/** True when `value` implements Standard Schema v1 (`'~standard'` with a `validate` function), as zod 4 does. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (
    (typeof value !== 'object' && typeof value !== 'function') ||
    value === null ||
    !('~standard' in value)
  ) {
    return false;
  }
  const standard = (value as { '~standard': unknown })['~standard'];
  return (
    typeof standard === 'object' &&
    standard !== null &&
    typeof (standard as { validate?: unknown }).validate === 'function'
  );
}

/**
 * Turns a Standard Schema or a JSON Schema into a JSON Schema plus a validator. For a Standard Schema the JSON Schema
 * is `explicitJsonSchema` when given, else derived through Standard JSON Schema (`~standard.jsonSchema.input`).
 * `label` names the option in error messages (`tool "get_weather" input`). Throws `config.invalid` when no JSON
 * Schema can be had, or when the JSON Schema is not plain JSON or holds an unusable `pattern`.
 */
export function resolveSchema<Output>(
  schema: SchemaLike<Output>,
  label: string,
  explicitJsonSchema?: JsonSchemaInput,
): ResolvedSchema<Output> {
  if (isStandardSchema(schema)) {
    const standard = schema['~standard'];
    const jsonSchema = copyJsonSchema(explicitJsonSchema ?? deriveJsonSchema(schema, label), label);
    return {
      jsonSchema,
      validate(value) {
        const result = standard.validate(value);
        return result instanceof Promise ? result.then(toValidationResult) : toValidationResult(result);
      },
    };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new KeelError(
      'config.invalid',
      `${label} must be a Standard Schema (such as a zod 4 schema) or a JSON Schema object`,
    );
  }
  const jsonSchema = copyJsonSchema(explicitJsonSchema ?? schema, label);
  return {
    jsonSchema,
    validate(value) {
      const issues = validateJsonSchema(jsonSchema, value);
      return issues.length === 0 ? { success: true, value: value as Output } : { success: false, issues };
    },
  };
}

function deriveJsonSchema(schema: StandardSchemaV1, label: string): unknown {
  const standard = schema['~standard'];
  const hint = `pass its JSON Schema explicitly (inputJsonSchema / jsonSchema), or a JSON Schema object instead`;
  if (typeof standard.jsonSchema?.input !== 'function') {
    throw new KeelError(
      'config.invalid',
      `${label}: the ${standard.vendor} schema does not implement Standard JSON Schema (zod 4.2 or later does), so keel cannot derive the JSON Schema the model needs; ${hint}`,
    );
  }
  try {
    return standard.jsonSchema.input({ target: JSON_SCHEMA_TARGET });
  } catch (error) {
    throw new KeelError(
      'config.invalid',
      `${label}: the ${standard.vendor} schema cannot be converted to JSON Schema (${error instanceof Error ? error.message : String(error)}); ${hint}`,
      { cause: error },
    );
  }
}

function toValidationResult<Output>(result: StandardSchemaResult<Output>): ValidationResult<Output> {
  if (result.issues === undefined) return { success: true, value: result.value };
  const issues: ValidationIssue[] = result.issues.map((issue) => ({
    path: formatJsonPath(
      (issue.path ?? []).map((segment) =>
        typeof segment === 'object' && segment !== null ? segment.key : segment,
      ),
    ),
    message: issue.message,
  }));
  return { success: false, issues };
}

/**
 * A deep copy of `value` checked to be plain JSON (no functions, `undefined`, non-finite numbers or class
 * instances), with the top-level `$schema` dropped (providers reject or ignore it). Throws `config.invalid`.
 */
function copyJsonSchema(value: unknown, label: string): JsonSchema {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new KeelError('config.invalid', `${label}: the JSON Schema must be an object`);
  }
  const copy = copyJson(value, [], label, 0) as JsonSchema;
  delete copy.$schema;
  return copy;
}

function copyJson(
  value: unknown,
  path: readonly PropertyKey[],
  label: string,
  depth: number,
): JsonSchema[string] {
  const invalid = (why: string) => {
    const where = formatJsonPath(path);
    // `schemaPath` is the place as data (keys and indexes), for callers that locate it in a file.
    return new KeelError('config.invalid', `${label}: the JSON Schema ${why} at ${where}`, {
      data: { schemaPath: path.map((part) => (typeof part === 'number' ? part : String(part))) },
    });
  };
  if (depth > MAX_SCHEMA_DEPTH) throw invalid(`is nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid('holds a non-finite number');
    return value;
  }
  if (Array.isArray(value))
    return value.map((item, index) => copyJson(item, [...path, index], label, depth + 1));
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw invalid('holds a non-plain object');
    const copy: JsonSchema = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      if (key === 'pattern' && typeof item === 'string') {
        const problem = checkSchemaPattern(item);
        if (problem !== undefined) throw invalid(`has a pattern that ${problem}`);
      }
      copy[key] = copyJson(item, [...path, key], label, depth + 1);
    }
    return copy;
  }
  throw invalid(`holds a ${typeof value}`);
}
