import { KeelError } from '../../errors/keel-error.js';
import { closestName } from '../../options/closest-name.js';
import type { JsonSyntaxError } from '../../schemas/parse-json.js';
import { parseJson } from '../../schemas/parse-json.js';
import type { JsonSchema } from '../../spec/model.js';
import type { ValidationIssue } from '../../spec/tool.js';

/** Longest schema text included in guidance; longer schemas are cut (the model was sent the full schema anyway). */
const MAX_SCHEMA_CHARS_IN_GUIDANCE = 4_000;
/** Issues listed in guidance; the rest are counted. */
const MAX_ISSUES_IN_GUIDANCE = 10;
/** Characters of the arguments shown on each side of a syntax error. */
const SNIPPET_RADIUS = 40;

/**
 * The error (and guidance) for a call to a tool that does not exist: `tool.not_found`, naming the available tools and
 * suggesting the closest name by edit distance when one is close enough to be a typo.
 *
 * @example
 *   unknownToolError('get_wether', ['get_weather', 'search']).guidance;
 *   // 'There is no tool named "get_wether". Did you mean "get_weather"? Available tools: get_weather, search. ...'
 */
export function unknownToolError(name: string, availableNames: readonly string[]): KeelError {
  const suggestion = closestName(name, availableNames);
  const listed = availableNames.length === 0 ? 'none' : availableNames.join(', ');
  const guidance =
    `There is no tool named ${JSON.stringify(name)}.` +
    (suggestion === undefined ? '' : ` Did you mean ${JSON.stringify(suggestion)}?`) +
    ` Available tools: ${listed}.` +
    (availableNames.length === 0
      ? ' Answer without calling a tool.'
      : ' Call one of them by its exact name.');
  return new KeelError('tool.not_found', `The model called an unknown tool ${JSON.stringify(name)}`, {
    data: { tool: name, available: [...availableNames], ...(suggestion === undefined ? {} : { suggestion }) },
    guidance,
  });
}

/**
 * The error (and guidance) for arguments that parsed as JSON but do not match the tool's schema:
 * `tool.invalid_input`, listing the issues with their JSON paths and the tool's input schema.
 */
export function mismatchedArgumentsError(
  definition: { readonly name: string; readonly inputSchema: JsonSchema },
  issues: readonly ValidationIssue[],
): KeelError {
  const guidance =
    `The arguments for ${JSON.stringify(definition.name)} do not match its input schema:\n` +
    formatIssues(issues) +
    `\nCall ${JSON.stringify(definition.name)} again with arguments that match this JSON Schema:\n` +
    formatSchema(definition.inputSchema);
  return new KeelError(
    'tool.invalid_input',
    `Invalid arguments for tool "${definition.name}": ${summarize(issues)}`,
    {
      data: {
        tool: definition.name,
        issues: issues.slice(0, MAX_ISSUES_IN_GUIDANCE).map((issue) => ({ ...issue })),
      },
      guidance,
    },
  );
}

/**
 * The error (and guidance) for arguments that are not valid JSON: `tool.invalid_input`, with the parse error's
 * position, line and column, and the text around it.
 */
export function malformedArgumentsError(
  toolName: string,
  argumentsText: string,
  syntaxError: JsonSyntaxError,
): KeelError {
  const guidance =
    `The arguments for ${JSON.stringify(toolName)} are not valid JSON: ${syntaxError.message}.\n` +
    `Near: ${snippet(argumentsText, syntaxError.position)}\n` +
    'Send the arguments again as one JSON object, with double-quoted property names and strings, and no trailing commas or comments.';
  return new KeelError(
    'tool.invalid_input',
    `Malformed JSON arguments for tool "${toolName}": ${syntaxError.message}`,
    {
      data: {
        tool: toolName,
        position: syntaxError.position,
        line: syntaxError.line,
        column: syntaxError.column,
        argumentsChars: argumentsText.length,
      },
      guidance,
    },
  );
}

/** The outcome of {@link parseToolArguments}. */
export type ParsedArguments = { success: true; value: unknown } | { success: false; error: KeelError };

/**
 * Parses a tool call's raw `arguments` text. Empty or blank text means no arguments (`{}`), as several providers send
 * for tools without parameters. Malformed JSON yields {@link malformedArgumentsError}.
 */
export function parseToolArguments(toolName: string, argumentsText: string): ParsedArguments {
  if (argumentsText.trim() === '') return { success: true, value: {} };
  const parsed = parseJson(argumentsText);
  return parsed.success
    ? { success: true, value: parsed.value }
    : { success: false, error: malformedArgumentsError(toolName, argumentsText, parsed.error) };
}

/** Issues as a bulleted list, capped at 10 with a count of the rest. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  const listed = issues.slice(0, MAX_ISSUES_IN_GUIDANCE).map((issue) => `- ${issue.path}: ${issue.message}`);
  if (issues.length > MAX_ISSUES_IN_GUIDANCE)
    listed.push(`- ... and ${issues.length - MAX_ISSUES_IN_GUIDANCE} more`);
  return listed.join('\n');
}

/** A schema as JSON text for guidance, cut at 4,000 characters. */
export function formatSchema(schema: JsonSchema): string {
  const text = JSON.stringify(schema);
  return text.length <= MAX_SCHEMA_CHARS_IN_GUIDANCE
    ? text
    : `${text.slice(0, MAX_SCHEMA_CHARS_IN_GUIDANCE)}... [schema cut at ${MAX_SCHEMA_CHARS_IN_GUIDANCE} characters]`;
}

function summarize(issues: readonly ValidationIssue[]): string {
  const first = issues[0];
  if (first === undefined) return 'rejected by the schema';
  return `${first.path} ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`;
}

function snippet(text: string, position: number): string {
  const start = Math.max(0, position - SNIPPET_RADIUS);
  const end = Math.min(text.length, position + SNIPPET_RADIUS);
  const before = (start > 0 ? '...' : '') + text.slice(start, position);
  const after = text.slice(position, end) + (end < text.length ? '...' : '');
  return JSON.stringify(`${before}<<HERE>>${after}`);
}
