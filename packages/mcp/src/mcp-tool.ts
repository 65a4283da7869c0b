import {
  type JsonSchemaInput,
  KeelError,
  type Tool,
  type ToolContext,
  type ValidationResult,
} from '@keel/core';
import { type JsonSchema, resolveSchema } from '@keel/core/adapter';
import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { CallSite } from './errors.js';

/** A keel tool made from a tool an MCP server lists, with where it came from. */
export interface McpTool extends Tool<Record<string, unknown>, unknown> {
  readonly mcp: {
    /** The server's name (the toolset's `name`). */
    readonly server: string;
    /** The tool as the server listed it; its `annotations` are hints, not guarantees. */
    readonly definition: McpToolDefinition;
  };
}

/** One listed tool as a call needs it. */
export interface McpCallTarget {
  readonly site: CallSite;
  readonly definition: McpToolDefinition;
}

/** What every tool of one toolset shares. */
export interface McpToolSettings {
  readonly server: string;
  readonly timeoutMs: number;
  readonly destructiveNeedsApproval: boolean;
  /** Runs a call on the server. */
  readonly call: (
    target: McpCallTarget,
    input: Record<string, unknown>,
    context: ToolContext,
  ) => Promise<unknown>;
}

/**
 * The keel tool for one listed MCP tool:
 * - name as given (see `keelToolNames`), description as listed (the title, or a note naming the server, when empty);
 * - the input JSON Schema as listed, validated by keel's validator before a call, so the model corrects its own
 *   mistakes; a schema keel cannot check (an unusable `pattern`) is still sent to the model, and only the server
 *   validates it;
 * - `idempotent` when the server says `readOnlyHint` or `idempotentHint`; approval needed for destructive tools
 *   (neither `readOnlyHint: true` nor `destructiveHint: false`, the MCP defaults) when the toolset asks for it.
 */
export function mcpTool(definition: McpToolDefinition, name: string, settings: McpToolSettings): McpTool {
  const annotations = definition.annotations;
  const readOnly = annotations?.readOnlyHint === true;
  const idempotent = readOnly || annotations?.idempotentHint === true;
  const destructive = !readOnly && annotations?.destructiveHint !== false;
  const site: CallSite = {
    server: settings.server,
    toolName: name,
    mcpToolName: definition.name,
    idempotent,
  };
  const { jsonSchema, validate } = inputSchemaOf(
    definition,
    `MCP tool "${definition.name}" of "${settings.server}"`,
  );
  const description =
    definition.description?.trim() ||
    definition.title?.trim() ||
    `${definition.name}, a tool of the MCP server "${settings.server}"`;
  const target: McpCallTarget = { site, definition };
  const tool: McpTool = {
    name,
    description,
    inputSchema: jsonSchema,
    validate,
    idempotent,
    timeoutMs: settings.timeoutMs,
    ...(settings.destructiveNeedsApproval && destructive ? { needsApproval: true } : {}),
    execute: (input, context) => settings.call(target, input, context),
    mcp: { server: settings.server, definition },
  };
  return Object.freeze(tool);
}

type Validate = (input: unknown) => ValidationResult<Record<string, unknown>>;

function inputSchemaOf(
  definition: McpToolDefinition,
  label: string,
): { jsonSchema: JsonSchema; validate: Validate } {
  // The SDK has parsed the listing as JSON; keel checks again that it is plain JSON while copying it.
  const listed = { ...definition.inputSchema, type: 'object' } as JsonSchemaInput;
  try {
    const resolved = resolveSchema<Record<string, unknown>>(listed, `${label} input`);
    return { jsonSchema: resolved.jsonSchema, validate: resolved.validate as Validate };
  } catch (error) {
    if (!KeelError.isInstance(error) || error.code !== 'config.invalid') throw error;
    const jsonSchema = JSON.parse(JSON.stringify(listed)) as JsonSchema;
    delete jsonSchema.$schema;
    return { jsonSchema, validate: objectOnly };
  }
}

function objectOnly(input: unknown): ValidationResult<Record<string, unknown>> {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? { success: true, value: input as Record<string, unknown> }
    : { success: false, issues: [{ path: '$', message: 'must be an object' }] };
}
