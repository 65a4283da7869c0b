import { KeelError } from '../../errors/keel-error.js';
import { type KnownOptions, rejectUnknownOptions } from '../../options/known-options.js';
import { optionError } from '../../options/option-error.js';
import { type JsonSchemaInput, resolveSchema, type SchemaLike } from '../../schemas/schema.js';
import type { ToolDefinition } from '../../spec/model.js';
import {
  TOOL_NAME_PATTERN,
  type Tool,
  type ToolContext,
  type ToolFallback,
  type ToolReconcile,
} from '../../spec/tool.js';
import { checkFallbacks } from './tool-fallback.js';

/** Options of {@link tool}. */
export interface ToolOptions<Input, Output> {
  /** Sent to the model; 1 to 64 letters, digits, `_` or `-`. Required. */
  name: string;
  /** Tells the model what the tool does and when to use it. Required, non-empty. */
  description: string;
  /**
   * The input's schema: a Standard Schema such as a zod 4 schema (validated by the library, transforms applied), or a
   * plain JSON Schema object (validated by keel's own validator, see `validateJsonSchema`). Its top level must be an
   * object schema (`type: 'object'`): providers accept nothing else. Required.
   */
  input: SchemaLike<Input>;
  /**
   * The JSON Schema sent to the model when `input` is a Standard Schema. Defaults to the one the library derives
   * through Standard JSON Schema (zod 4.2 and later do: `~standard.jsonSchema.input({ target: 'draft-07' })`). Needed
   * only for libraries without Standard JSON Schema, or schemas they cannot convert (zod's `z.date()`, `z.custom()`).
   */
  inputJsonSchema?: JsonSchemaInput;
  /**
   * Whether running the tool twice with the same input is harmless. On resume, a call that may have executed is
   * re-run only when this is true; otherwise the run is interrupted for a decision. Defaults to false.
   */
  idempotent?: boolean;
  /** Longest a call may run, in milliseconds. Defaults to the agent's tool timeout. */
  timeoutMs?: number;
  /** Whether a human must approve each call before it runs (or a function deciding per input). Defaults to false. */
  needsApproval?: boolean | ((input: Input) => boolean | Promise<boolean>);
  /**
   * Runs the tool. Throw to fail (the error is classified and shown to the model as data), or throw a directive
   * (`retryStep`, `stopRun`) to steer the run. Stop promptly when `context.signal` aborts.
   */
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
  /**
   * What answers when a call fails (after its retries), tried in order, each matched against the latest failure:
   * another tool (`{ tool: replica }`, given the same arguments) or a function returning a degraded value
   * (`{ value: (input, { error }) => cached(input) }`). The model gets the result marked `degraded` (what failed, what
   * answered, why), a `tool-degraded` event is emitted and the report counts it. When every matching fallback fails
   * too, the model gets the last failure, with the whole chain in `data.failures`. Defaults to none.
   *
   * @example
   *   fallbacks: [
   *     { tool: searchReplica, on: ['tool.timeout', 'policy.circuit_open'] },
   *     { value: (input) => cache.get(input.query), name: 'search_cache', reason: 'Results from the nightly cache' },
   *   ]
   */
  fallbacks?: readonly ToolFallback<Input>[];
  /**
   * Finds out whether an earlier call took effect, for a tool that is not idempotent: when a call's outcome is unknown
   * (it timed out, or its connection dropped, after it may have taken effect) and the model calls the tool again with
   * the same arguments, keel asks `reconcile(input, { idempotencyKey, signal })` first, with the earlier call's key
   * and a signal bounded by the tool's timeout. `{ happened: true, output }` answers the repeat with `output` without
   * executing anything; `{ happened: false }` lets the repeat run (once). A throw leaves the outcome unknown: the
   * agent's `uncertainCalls` policy applies. Also asked on resume about a call the process died in. Defaults to none.
   *
   * @example
   *   reconcile: async (input, { idempotencyKey, signal }) => {
   *     const ticket = await tickets.findByKey(idempotencyKey, { signal });
   *     return ticket === undefined ? { happened: false } : { happened: true, output: ticket };
   *   },
   */
  reconcile?: ToolReconcile<Input, unknown>;
}

/** The options `tool()` takes: any other is refused, with the closest known one suggested. */
const TOOL_OPTIONS = {
  name: true,
  description: true,
  input: true,
  inputJsonSchema: true,
  idempotent: true,
  timeoutMs: true,
  needsApproval: true,
  execute: true,
  fallbacks: true,
  reconcile: true,
} as const satisfies KnownOptions<ToolOptions<unknown, unknown>>;

/**
 * Defines a tool the agent can call. Options are checked at once: a bad name, an empty description, a missing
 * `execute`, an unknown option or a schema keel cannot turn into JSON Schema throws a `config.invalid` KeelError
 * saying what to fix, with the kit's `{ where, option, path }` as its data.
 *
 * @example
 *   const weather = tool({
 *     name: 'get_weather',
 *     description: 'Current weather for a city',
 *     input: z.object({ city: z.string() }),
 *     idempotent: true,
 *     timeoutMs: 5_000,
 *     async execute({ city }, { signal }) {
 *       return fetchWeather(city, { signal });
 *     },
 *   });
 */
export function tool<Input = unknown, Output = unknown>(
  options: ToolOptions<Input, Output>,
): Tool<Input, Output> {
  if (typeof options !== 'object' || options === null) {
    throw new KeelError(
      'config.invalid',
      'tool() needs an options object with name, description, input and execute',
    );
  }
  const {
    name,
    description,
    input,
    inputJsonSchema,
    idempotent = false,
    timeoutMs,
    needsApproval,
    execute,
    fallbacks,
    reconcile,
  } = options;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw optionError({
      where: 'tool()',
      option: 'name',
      message: `tool name ${JSON.stringify(name)} is invalid: use 1 to 64 letters, digits, "_" or "-" (such as "get_weather")`,
      prefixWhere: false,
    });
  }
  const label = `tool "${name}"`;
  // A built tool spread into a new one (`tool({ ...search, name: 'search_eu' })`) brings the fields tool() derives
  // from `input`, made again here; any other unknown option is refused.
  const {
    inputSchema: _derivedSchema,
    validate: _derivedValidate,
    ...given
  } = options as ToolOptions<Input, Output> & Partial<Pick<Tool, 'inputSchema' | 'validate'>>;
  rejectUnknownOptions(given, TOOL_OPTIONS, { where: label });
  const refuse = (option: keyof typeof TOOL_OPTIONS, message: string) =>
    optionError({ where: label, option, message: `${label}${message}`, prefixWhere: false });
  if (typeof description !== 'string' || description.trim() === '')
    throw refuse('description', ' needs a non-empty description: the model reads it to choose tools');
  if (typeof execute !== 'function') throw refuse('execute', ' needs an execute function');
  if (typeof idempotent !== 'boolean') throw refuse('idempotent', ': idempotent must be a boolean');
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)
  ) {
    throw refuse('timeoutMs', ': timeoutMs must be a positive number of milliseconds');
  }
  if (
    needsApproval !== undefined &&
    typeof needsApproval !== 'boolean' &&
    typeof needsApproval !== 'function'
  ) {
    throw refuse('needsApproval', ': needsApproval must be a boolean or a function');
  }
  if (input === undefined || input === null)
    throw refuse('input', ' needs an input schema (a zod 4 schema or a JSON Schema object)');
  const resolved = resolveInput(input, label, inputJsonSchema);
  if (resolved.jsonSchema.type !== 'object') {
    throw optionError({
      where: label,
      option: 'input',
      path: ['input', 'type'],
      message: `${label} input must be an object schema (JSON Schema type "object", such as z.object({...})): providers accept no other tool input`,
      prefixWhere: false,
    });
  }
  if (reconcile !== undefined && typeof reconcile !== 'function')
    throw refuse('reconcile', ': reconcile must be a function (input, { idempotencyKey, signal })');
  const checkedFallbacks = checkFallbacks(fallbacks, label, name);
  const definition: Tool<Input, Output> = {
    name,
    description,
    inputSchema: resolved.jsonSchema,
    validate: (value) => resolved.validate(value),
    idempotent,
    timeoutMs,
    needsApproval,
    execute: (value, context) => execute(value, context),
    ...(checkedFallbacks === undefined
      ? {}
      : { fallbacks: checkedFallbacks as readonly ToolFallback<Input>[] }),
    ...(reconcile === undefined
      ? {}
      : {
          reconcile: (value: Input, context: Parameters<ToolReconcile<Input, unknown>>[1]) =>
            reconcile(value, context),
        }),
  };
  return Object.freeze(definition);
}

/** The description of a tool the model is sent. */
export function toToolDefinition(
  definition: Pick<Tool, 'name' | 'description' | 'inputSchema'>,
): ToolDefinition {
  return { name: definition.name, description: definition.description, inputSchema: definition.inputSchema };
}

/**
 * Indexes tools by name, for lookup when the model calls one. Throws `config.invalid` when two tools share a name
 * or an entry is not a tool.
 */
export function indexTools<T extends Pick<Tool, 'name' | 'execute'>>(
  tools: readonly T[],
): ReadonlyMap<string, T> {
  if (!Array.isArray(tools))
    throw new KeelError('config.invalid', 'tools must be an array of tools built with tool()');
  const byName = new Map<string, T>();
  tools.forEach((entry, index) => {
    if (typeof entry !== 'object' || entry === null || typeof entry.execute !== 'function') {
      throw new KeelError('config.invalid', `tools[${index}] is not a tool: build tools with tool({...})`);
    }
    if (byName.has(entry.name)) {
      throw new KeelError('config.invalid', `two tools are named "${entry.name}": tool names must be unique`);
    }
    byName.set(entry.name, entry);
  });
  return byName;
}

/** The input schema resolved; a refusal names the place in the schema as its option path (`['input', 'properties', 'count']`). */
function resolveInput<Input>(
  input: SchemaLike<Input>,
  label: string,
  inputJsonSchema: JsonSchemaInput | undefined,
): ReturnType<typeof resolveSchema<Input>> {
  try {
    return resolveSchema(input, `${label} input`, inputJsonSchema);
  } catch (error) {
    if (!KeelError.isInstance(error) || error.code !== 'config.invalid') throw error;
    const schemaPath = Array.isArray(error.data.schemaPath)
      ? (error.data.schemaPath as (string | number)[])
      : [];
    throw optionError({
      where: label,
      option: 'input',
      path: ['input', ...schemaPath],
      message: error.message,
      prefixWhere: false,
      ...(error.guidance === undefined ? {} : { guidance: error.guidance }),
      cause: error.cause,
    });
  }
}
