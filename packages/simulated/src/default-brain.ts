import type { JsonValue, Message, ToolCall } from '@keel/core';
import type { ToolDefinition } from '@keel/core/adapter';
import type { Brain, BrainReply, BrainRequest, BrainToolCall } from './brain.js';
import {
  argumentsFromSchema,
  hasEntityProperty,
  isRecord,
  matchesType,
  valueForProperty,
  valueFromSchema,
} from './schema-values.js';
import { identifierWords, keywords, properNouns } from './words.js';

type ToolMessage = Extract<Message, { role: 'tool' }>;

/**
 * A question about what a folder holds: "What files are in the examples folder?", "Which files are in docs/?",
 * "List the files in the project directory".
 */
const LISTING_QUESTION =
  /\b(?:what|which)\b[^?.!]*\b(?:in|inside|under)\b[^?.!]*\b(?:folder|directory|dir)\b|\b(?:what|which)\b[^?.!]*\bin\s+\S+\/|\blist\b[^?.!]*\b(?:files|folders|directories|folder|directory)\b/i;
/** A tool that lists a folder, by the words of its name (`list_directory`, `directory_tree`, `ls`). */
const LISTING_TOOL_WORD = /^(?:list|ls|tree)$/;

/** How often the default brain corrects calls to one tool after the user's last message before it gives up. */
export const MAX_CORRECTIONS = 2;
const QUOTE_CHARS = 240;

/**
 * The tools whose name or description shares a keyword with `task` (stopwords ignored, plurals folded), in the
 * order they were offered.
 */
export function relevantTools(task: string, tools: readonly ToolDefinition[]): ToolDefinition[] {
  const taskKeywords = keywords(task);
  return tools.filter((tool) => {
    const toolKeywords = keywords(`${identifierWords(tool.name)} ${tool.description}`);
    return [...toolKeywords].some((keyword) => taskKeywords.has(keyword));
  });
}

/**
 * The simulated model's default behaviour, deterministic for a given request:
 * - after a user message, calls every relevant tool once, in parallel, with arguments built from each tool's
 *   schema and the task's words (`tool_choice` `required` with no match calls the first tool; a named choice
 *   calls that tool; `none` calls nothing); a question about what a folder holds calls only the relevant tools that
 *   list (`list_directory`), with the path the task spells, else `.`;
 * - after tool results, answers with a text quoting them, or JSON built from `response_format`'s schema;
 * - after a failed tool call, retries it with arguments corrected along the error's guidance (missing, mistyped
 *   or named arguments are rebuilt; a value quoted in the guidance is used; an unknown tool is replaced by a
 *   relevant one), at most {@link MAX_CORRECTIONS} times per tool, and explains the failure when it cannot.
 */
export const defaultBrain: Brain = (request) => {
  const { messages } = request;
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const task = lastUser === -1 ? '' : messages[lastUser]!.content;
  const last = messages.at(-1);
  if (last?.role === 'tool') return afterToolResults(request, task, lastUser);
  if (last?.role === 'user') {
    const calls = plannedCalls(request, task);
    if (calls.length > 0) return { toolCalls: calls };
  }
  return answer(request, task, []);
};

function plannedCalls(request: BrainRequest, task: string): BrainToolCall[] {
  const { tools, toolChoice } = request;
  if (toolChoice === 'none' || tools.length === 0) return [];
  let chosen: ToolDefinition[];
  if (typeof toolChoice === 'object') chosen = tools.filter((tool) => tool.name === toolChoice.name);
  else chosen = relevantTools(task, tools);
  const listing = LISTING_QUESTION.test(task) ? chosen.filter(isListingTool) : [];
  if (listing.length > 0) chosen = listing;
  if (chosen.length === 0 && toolChoice === 'required') chosen = [tools[0]!];
  // A task naming several entities ("Paris and Oslo") gets one call per entity from tools that take one; a
  // capitalised word naming the tool itself ("Weather in Paris?") is no entity.
  const toolWords = keywords(
    tools.map((tool) => `${identifierWords(tool.name)} ${tool.description}`).join(' '),
  );
  const entities = properNouns(task).filter(
    (noun) => ![...keywords(noun)].every((word) => toolWords.has(word)),
  ).length;
  return chosen.flatMap((tool) => {
    const variants = hasEntityProperty(tool.inputSchema)
      ? Math.min(MAX_CALLS_PER_TOOL, Math.max(1, entities))
      : 1;
    const calls = new Map<string, BrainToolCall>();
    for (let variant = 0; variant < variants; variant++) {
      const input = argumentsFromSchema(
        tool.inputSchema,
        task,
        variant,
        listing.length > 0 ? '.' : undefined,
      );
      calls.set(JSON.stringify(input), { name: tool.name, arguments: input });
    }
    return [...calls.values()];
  });
}

function isListingTool(tool: ToolDefinition): boolean {
  return identifierWords(tool.name)
    .toLowerCase()
    .split(/\s+/)
    .some((word) => LISTING_TOOL_WORD.test(word));
}

/** The most calls one tool gets for one task. */
const MAX_CALLS_PER_TOOL = 4;

function afterToolResults(request: BrainRequest, task: string, lastUser: number): BrainReply {
  const { messages } = request;
  const sinceUser = messages.slice(lastUser + 1);
  const calls = new Map<string, ToolCall>();
  for (const message of sinceUser) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.set(call.id, call);
  }
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  const batch = messages.slice(lastAssistant + 1).filter((message) => message.role === 'tool');
  const retries: BrainToolCall[] = [];
  for (const result of batch) {
    if (!result.isError) continue;
    const call = calls.get(result.toolCallId);
    const name = call?.name ?? result.toolName;
    const failures = sinceUser.filter(
      (message) =>
        message.role === 'tool' &&
        message.isError &&
        (calls.get(message.toolCallId)?.name ?? message.toolName) === name,
    ).length;
    if (failures > MAX_CORRECTIONS || request.toolChoice === 'none') continue;
    const retry = correctedCall(request, task, name, call?.arguments ?? '', result, failures);
    if (retry !== undefined) retries.push(retry);
  }
  if (retries.length > 0) {
    const names = [...new Set(retries.map((retry) => retry.name))].join(', ');
    return {
      content: `The last call failed; calling ${names} again with corrected arguments.`,
      toolCalls: retries,
    };
  }
  const results = sinceUser.filter((message) => message.role === 'tool');
  return answer(request, task, results);
}

function correctedCall(
  request: BrainRequest,
  task: string,
  name: string,
  previousArguments: string,
  result: ToolMessage,
  failures: number,
): BrainToolCall | undefined {
  const tool = request.tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    // The model named a tool that does not exist: pick the offered tool closest to that name and the task.
    const candidates = relevantTools(`${identifierWords(name)} ${task}`, request.tools);
    const replacement = candidates.find((candidate) => candidate.name !== name);
    return (
      replacement && { name: replacement.name, arguments: argumentsFromSchema(replacement.inputSchema, task) }
    );
  }
  const corrected = correctArguments(tool, previousArguments, errorText(result.content), task, failures);
  return corrected && { name, arguments: corrected };
}

const MALFORMED_ARGUMENTS = /not valid JSON|malformed JSON/i;

/**
 * Arguments fixed after `error`: unparseable arguments (or arguments the error calls malformed) are rebuilt; properties that are missing, of the wrong type
 * or named in the error get a new value (one quoted in the error when there is one, else the next candidate from
 * the task); unknown properties named in the error are dropped. Undefined when nothing would change.
 */
function correctArguments(
  tool: ToolDefinition,
  previousText: string,
  error: string,
  task: string,
  variant: number,
): Record<string, JsonValue> | undefined {
  const previous = parseObject(previousText);
  // Providers send malformed arguments back as `{}` (servers parse them), so the error is what says they were broken.
  if (previous === undefined || MALFORMED_ARGUMENTS.test(error))
    return argumentsFromSchema(tool.inputSchema, task);
  const schema = tool.inputSchema;
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const lowerError = error.toLowerCase();
  const next: Record<string, JsonValue> = { ...previous };
  for (const key of Object.keys(next)) {
    const unknown = Object.keys(properties).length > 0 && !Object.hasOwn(properties, key);
    if (unknown && (schema.additionalProperties === false || mentions(lowerError, key) !== -1))
      delete next[key];
  }
  for (const [key, propertySchema] of Object.entries(properties)) {
    if (!isRecord(propertySchema)) continue;
    const present = Object.hasOwn(next, key);
    if (!present && !required.includes(key)) continue;
    const mention = mentions(lowerError, key);
    const wellTyped = present && matchesType(propertySchema, next[key]);
    if (wellTyped && mention === -1) continue;
    const suggested =
      mention === -1 ? undefined : suggestedValue(error.slice(mention), propertySchema, next[key]);
    // A value of the right type was rejected for what it is: move on to the next candidate rather than the best.
    next[key] = suggested ?? freshValue(key, propertySchema, next[key], task, wellTyped ? variant : 0);
  }
  return JSON.stringify(next) === JSON.stringify(previous) ? undefined : next;
}

function freshValue(
  key: string,
  schema: Record<string, JsonValue>,
  previous: JsonValue | undefined,
  task: string,
  variant: number,
): JsonValue {
  let value = valueForProperty(key, schema, { task, variant });
  for (let attempt = 1; attempt <= 4 && JSON.stringify(value) === JSON.stringify(previous); attempt++) {
    value = valueForProperty(key, schema, { task, variant: variant + attempt });
  }
  return value;
}

/** A value the error text offers after naming the property: a quoted string or, for numbers, a number. */
function suggestedValue(
  text: string,
  schema: Record<string, JsonValue>,
  previous: JsonValue | undefined,
): JsonValue | undefined {
  const numeric = schema.type === 'number' || schema.type === 'integer';
  const pattern = numeric ? /-?\d+(?:\.\d+)?/g : /["'“‘`]([^"'”’`\n]{1,200})["'”’`]/g;
  for (const match of text.matchAll(pattern)) {
    const candidate: JsonValue = numeric ? Number(match[0]) : match[1]!;
    if (candidate === previous || !matchesType(schema, candidate)) continue;
    return candidate;
  }
  return undefined;
}

function mentions(lowerText: string, key: string): number {
  const escaped = key.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`(^|[^\\w])${escaped}($|[^\\w])`).exec(lowerText);
  return match === null ? -1 : match.index;
}

/** What the user's images and files were, in words: `an image (image/png, 68 bytes) and a file report.pdf ...`. */
function attachmentsOf(request: BrainRequest): string {
  const described = request.messages.flatMap((message) =>
    message.role !== 'user'
      ? []
      : (message.parts ?? []).map((part) => {
          if ('url' in part) return `an image at ${part.url}`;
          const size = Math.floor((part.data.length * 3) / 4) - (part.data.match(/=*$/)?.[0].length ?? 0);
          if (part.type === 'image') return `an image (${part.mediaType}, ${size} bytes)`;
          const name = part.filename === undefined ? 'a file' : `a file ${part.filename}`;
          return `${name} (${part.mediaType}, ${size} bytes)`;
        }),
  );
  return described.join(' and ');
}

function answer(request: BrainRequest, task: string, results: ToolMessage[]): BrainReply {
  const succeeded = new Set(results.filter((result) => !result.isError).map((result) => result.toolName));
  const successes = results.filter((result) => !result.isError);
  const failures = results.filter((result) => result.isError && !succeeded.has(result.toolName));
  const found = successes.map(
    (result) => `${result.toolName} returned ${quote(successText(result.content))}`,
  );
  const failed = failures.map(
    (result) => `${result.toolName} failed: ${quote(errorMessage(result.content))}`,
  );
  let text: string;
  if (results.length === 0)
    text = `This is the simulated model answering ${quote(task)} directly, without tools.`;
  else if (found.length === 0) text = `I could not complete the request: ${failed.join('; ')}.`;
  else {
    text = `Here is what I found: ${found.join('; ')}.`;
    if (failed.length > 0) text += ` Some of it is missing because ${failed.join('; ')}.`;
  }
  const seen = attachmentsOf(request);
  if (seen !== '') text += ` I was shown ${seen}.`;
  if (request.outputSchema === undefined) return { content: text };
  const context = [task, ...successes.map((result) => successText(result.content))].join('\n');
  const value = valueFromSchema(request.outputSchema.schema, {
    task: context,
    answer: text,
    allProperties: true,
  });
  return { content: JSON.stringify(value) };
}

/** Whether a tool result's content reads as an error. */
export function looksLikeError(content: string): boolean {
  const parsed = parseJson(content);
  if (isRecord(parsed)) {
    if (parsed.status === 'error' || parsed.isError === true) return true;
    return (
      parsed.error !== undefined &&
      parsed.error !== null &&
      parsed.error !== false &&
      parsed.status !== 'success'
    );
  }
  return /^\s*(error|failed|failure|exception)\b/i.test(content);
}

/** Every string in an error result (messages, guidance, issue paths), one a line; the text itself if not JSON. */
function errorText(content: string): string {
  const parsed = parseJson(content);
  if (parsed === undefined) return content;
  const parts: string[] = [];
  const visit = (value: JsonValue, key: string) => {
    if (key === 'stack') return;
    if (typeof value === 'string') parts.push(value);
    else if (Array.isArray(value)) for (const item of value) visit(item, key);
    else if (isRecord(value)) for (const [childKey, child] of Object.entries(value)) visit(child, childKey);
  };
  visit(parsed, '');
  return parts.join('\n');
}

/**
 * What a successful tool returned: the `content` of keel's `{"status":"success","content":...}`, else the text. An
 * object holding one text (an MCP server's `{ content: "..." }`) is that text.
 */
function successText(content: string): string {
  const parsed = parseJson(content);
  if (!isRecord(parsed) || parsed.status !== 'success' || !('content' in parsed)) return content;
  const inner = parsed.content;
  const values = isRecord(inner) ? Object.values(inner) : [];
  if (values.length === 1 && typeof values[0] === 'string') return values[0];
  return typeof inner === 'string' ? inner : JSON.stringify(inner ?? null);
}

function errorMessage(content: string): string {
  const parsed = parseJson(content);
  if (isRecord(parsed)) {
    const error = parsed.error;
    if (isRecord(error) && typeof error.message === 'string') return error.message;
    if (typeof error === 'string') return error;
    if (typeof parsed.message === 'string') return parsed.message;
  }
  return content;
}

function quote(text: string): string {
  const compact = text.replace(/\s+/g, ' ').trim();
  return `"${compact.length > QUOTE_CHARS ? `${compact.slice(0, QUOTE_CHARS - 1)}…` : compact}"`;
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function parseObject(text: string): Record<string, JsonValue> | undefined {
  const parsed = parseJson(text);
  return isRecord(parsed) ? parsed : undefined;
}
