import { KeelError } from '../../errors/keel-error.js';
import { type JsonParseResult, parseJson } from '../../schemas/parse-json.js';
import { type JsonSchemaInput, resolveSchema, type SchemaLike } from '../../schemas/schema.js';
import type { JsonSchema } from '../../spec/model.js';
import type { ValidationIssue } from '../../spec/tool.js';
import { TOOL_NAME_PATTERN } from '../../spec/tool.js';
import { formatIssues, formatSchema } from './correction.js';

/** Options of {@link structuredOutput}. */
export interface StructuredOutputOptions<Output> {
  /** The output's schema: a Standard Schema such as a zod 4 schema, or a JSON Schema object. Required. */
  schema: SchemaLike<Output>;
  /**
   * The JSON Schema sent to the model when `schema` is a Standard Schema. Defaults to the one derived through
   * Standard JSON Schema (zod 4.2 and later).
   */
  jsonSchema?: JsonSchemaInput;
  /** Names the schema for providers that ask for one (1 to 64 letters, digits, `_` or `-`). Defaults to `output`. */
  name?: string;
}

/** The final output's schema, ready for the run loop. */
export interface StructuredOutput<Output> {
  readonly name: string;
  /** Sent as the request's `outputSchema.schema`. */
  readonly jsonSchema: JsonSchema;
  /**
   * Parses and validates the model's final text. Tolerates surrounding whitespace, a Markdown code fence
   * (```json ... ```) and prose around a single JSON object or array. A failure carries an `output.invalid` error whose
   * guidance tells the model what to fix.
   */
  parse(text: string): Promise<StructuredOutputResult<Output>>;
}

/** What parsing the final text produced. */
export type StructuredOutputResult<Output> =
  | { success: true; value: Output }
  | { success: false; error: KeelError; issues: ValidationIssue[] };

/**
 * Defines the shape of a run's final answer. The loop asks the model for JSON matching it, parses the answer and, when
 * it does not match, sends the error's guidance back for the model to correct (within the correction limits).
 *
 * @example
 *   const verdict = structuredOutput({ schema: z.object({ approved: z.boolean(), reason: z.string() }) });
 *   const parsed = await verdict.parse('```json\n{"approved": true, "reason": "fits policy"}\n```');
 */
export function structuredOutput<Output = unknown>(
  options: StructuredOutputOptions<Output>,
): StructuredOutput<Output> {
  if (
    typeof options !== 'object' ||
    options === null ||
    options.schema === undefined ||
    options.schema === null
  ) {
    throw new KeelError(
      'config.invalid',
      'structuredOutput needs a schema (a zod 4 schema or a JSON Schema object)',
    );
  }
  const name = options.name ?? 'output';
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new KeelError(
      'config.invalid',
      `structuredOutput name ${JSON.stringify(name)} must be 1 to 64 letters, digits, "_" or "-"`,
    );
  }
  const resolved = resolveSchema(options.schema, 'structured output schema', options.jsonSchema);
  const schemaText = formatSchema(resolved.jsonSchema);
  return Object.freeze({
    name,
    jsonSchema: resolved.jsonSchema,
    async parse(text: string): Promise<StructuredOutputResult<Output>> {
      const parsed = extractJson(typeof text === 'string' ? text : '');
      if (!parsed.success) {
        const { error } = parsed;
        const issues = [{ path: '$', message: `not valid JSON: ${error.message}` }];
        return {
          success: false,
          issues,
          error: new KeelError('output.invalid', `The final output is not valid JSON: ${error.message}`, {
            data: { stage: 'parse', position: error.position, line: error.line, column: error.column },
            guidance:
              `Your final answer must be a single JSON value, with nothing else around it. It was not valid JSON: ${error.message}.\n` +
              `Answer again with JSON matching this JSON Schema:\n${schemaText}`,
          }),
        };
      }
      const validated = await resolved.validate(parsed.value);
      if (validated.success) return { success: true, value: validated.value };
      const issues = validated.issues;
      return {
        success: false,
        issues,
        error: new KeelError(
          'output.invalid',
          `The final output does not match its schema: ${issues.length} issue(s)`,
          {
            data: { stage: 'validate', issues: issues.slice(0, 10).map((issue) => ({ ...issue })) },
            guidance:
              `Your final answer does not match the required JSON Schema:\n${formatIssues(issues)}\n` +
              `Answer again with JSON matching this JSON Schema:\n${schemaText}`,
          },
        ),
      };
    },
  });
}

/**
 * Finds the JSON in a model's answer: the whole text; else the first Markdown code fence (```json or ```); else the
 * span from the first `{` or `[` to the last `}` or `]`. The error reported is the whole text's (or the fence's, when
 * there is one), so its position points into what the model meant as JSON.
 */
export function extractJson(text: string): JsonParseResult {
  const whole = parseJson(text.trim());
  if (whole.success) return whole;
  const fence = /```[ \t]*(?:json5?|JSON)?[ \t]*\r?\n([\s\S]*?)```/.exec(text);
  const fenced = fence === null ? undefined : parseJson(fence[1]!.trim());
  if (fenced?.success) return fenced;
  const start = text.search(/[{[]/);
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  if (start >= 0 && end > start) {
    const span = parseJson(text.slice(start, end + 1));
    if (span.success) return span;
  }
  return fenced ?? whole;
}
