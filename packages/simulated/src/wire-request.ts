import type { JsonValue, Message, ToolCall } from '@keel/core';
import type { JsonSchema, ToolChoice, ToolDefinition } from '@keel/core/adapter';
import type { BrainRequest } from './brain.js';
import { contentPartsOf } from './content-parts.js';
import { looksLikeError } from './default-brain.js';
import { isRecord } from './schema-values.js';

/** A chat completion request, parsed; or why it is invalid (the server answers 400 with it). */
export type ParsedRequest =
  | {
      ok: true;
      request: Omit<BrainRequest, 'index'>;
      stream: boolean;
      includeUsage: boolean;
      parallelToolCalls: boolean;
    }
  | { ok: false; message: string; param: string | null };

function fail(message: string, param: string | null): ParsedRequest {
  return { ok: false, message, param };
}

/** Reads an OpenAI Chat Completions request body into the brain's terms, checking what the server relies on. */
export function parseChatRequest(body: unknown): ParsedRequest {
  if (!isRecord(body)) return fail('The request body must be a JSON object.', null);
  const { model, messages } = body;
  if (typeof model !== 'string' || model === '') return fail('you must provide a model parameter', 'model');
  if (!Array.isArray(messages) || messages.length === 0) {
    return fail("'messages' must be a non-empty array of messages.", 'messages');
  }
  const converted: Message[] = [];
  const toolNames = new Map<string, string>();
  for (const [index, raw] of messages.entries()) {
    const message = toMessage(raw, toolNames);
    if (typeof message === 'string') return fail(message, `messages.[${index}]`);
    converted.push(message);
  }
  const tools = parseTools(body.tools);
  if (typeof tools === 'string') return fail(tools, 'tools');
  const toolChoice = parseToolChoice(body.tool_choice);
  if (toolChoice === undefined) return fail("Invalid value for 'tool_choice'.", 'tool_choice');
  const outputSchema = parseResponseFormat(body.response_format);
  if (outputSchema === null) return fail("Invalid value for 'response_format'.", 'response_format');
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    !(Number.isInteger(maxTokens) && (maxTokens as number) > 0)
  ) {
    return fail("'max_tokens' must be a positive integer.", 'max_tokens');
  }
  const request: Omit<BrainRequest, 'index'> = { model, messages: converted, tools, toolChoice, body };
  if (outputSchema !== undefined) request.outputSchema = outputSchema;
  if (typeof maxTokens === 'number') request.maxOutputTokens = maxTokens;
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  return {
    ok: true,
    request,
    stream: body.stream === true,
    includeUsage: streamOptions.include_usage === true,
    parallelToolCalls: body.parallel_tool_calls !== false,
  };
}

function text(content: JsonValue | undefined): string | undefined {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function toMessage(raw: JsonValue, toolNames: Map<string, string>): Message | string {
  if (!isRecord(raw)) return 'Each message must be an object.';
  const content = text(raw.content);
  if (content === undefined) return 'A message content must be a string, null or an array of parts.';
  switch (raw.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content };
    case 'user': {
      const parts = contentPartsOf(raw.content);
      return parts.length === 0 ? { role: 'user', content } : { role: 'user', content, parts };
    }
    case 'assistant': {
      const toolCalls: ToolCall[] = [];
      for (const call of Array.isArray(raw.tool_calls) ? raw.tool_calls : []) {
        const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
        if (
          !isRecord(call) ||
          typeof call.id !== 'string' ||
          fn === undefined ||
          typeof fn.name !== 'string'
        ) {
          return 'An assistant tool call needs an id and a function name.';
        }
        const args = typeof fn.arguments === 'string' ? fn.arguments : '';
        toolNames.set(call.id, fn.name);
        toolCalls.push({ id: call.id, name: fn.name, arguments: args });
      }
      return toolCalls.length > 0
        ? { role: 'assistant', content, toolCalls }
        : { role: 'assistant', content };
    }
    case 'tool': {
      if (typeof raw.tool_call_id !== 'string') return "A tool message needs a 'tool_call_id'.";
      const toolName = toolNames.get(raw.tool_call_id);
      if (toolName === undefined) {
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (no call has id ${raw.tool_call_id}).`;
      }
      const message: Message = { role: 'tool', toolCallId: raw.tool_call_id, toolName, content };
      if (looksLikeError(content)) message.isError = true;
      return message;
    }
    default:
      return `Invalid value for 'role': ${JSON.stringify(raw.role ?? null)}.`;
  }
}

function parseTools(raw: JsonValue | undefined): ToolDefinition[] | string {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return "'tools' must be an array.";
  const tools: ToolDefinition[] = [];
  for (const entry of raw) {
    const fn = isRecord(entry) && isRecord(entry.function) ? entry.function : undefined;
    if (fn === undefined || typeof fn.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(fn.name)) {
      return "Each tool must be { type: 'function', function: { name } } with a name of letters, digits, _ or -.";
    }
    const inputSchema: JsonSchema = isRecord(fn.parameters)
      ? fn.parameters
      : { type: 'object', properties: {} };
    tools.push({
      name: fn.name,
      description: typeof fn.description === 'string' ? fn.description : '',
      inputSchema,
    });
  }
  return tools;
}

function parseToolChoice(raw: JsonValue | undefined): ToolChoice | undefined {
  if (raw === undefined || raw === null) return 'auto';
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  if (isRecord(raw) && isRecord(raw.function) && typeof raw.function.name === 'string') {
    return { name: raw.function.name };
  }
  return undefined;
}

/** The requested JSON schema; undefined when plain text was asked for; null when the format is invalid. */
function parseResponseFormat(
  raw: JsonValue | undefined,
): { name: string; schema: JsonSchema } | undefined | null {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) return null;
  if (raw.type === 'text') return undefined;
  if (raw.type === 'json_object') {
    // Any object will do; an `answer` property gives the default brain somewhere to put its text.
    const schema: JsonSchema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
    };
    return { name: 'json_object', schema };
  }
  if (raw.type === 'json_schema' && isRecord(raw.json_schema) && isRecord(raw.json_schema.schema)) {
    const name = typeof raw.json_schema.name === 'string' ? raw.json_schema.name : 'response';
    return { name, schema: raw.json_schema.schema };
  }
  return null;
}
