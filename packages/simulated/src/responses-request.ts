import type { JsonValue, Message, ToolCall } from '@keel/core';
import type { JsonSchema, ToolChoice, ToolDefinition } from '@keel/core/adapter';
import type { BrainRequest } from './brain.js';
import { contentPartsOf } from './content-parts.js';
import { looksLikeError } from './default-brain.js';
import { isRecord } from './schema-values.js';
import type { ParsedRequest } from './wire-request.js';

/** The prefix of the encrypted reasoning the simulated server hands out (and wants back). */
export const SIMULATED_REASONING_PREFIX = 'sim-encrypted:';

function fail(message: string, param: string | null): ParsedRequest {
  return { ok: false, message, param };
}

/**
 * Reads an OpenAI Responses API request body (`POST /v1/responses`) into the brain's terms, checking what the real
 * API refuses and keel relies on: input items of known types, function calls answered by a `function_call_output`
 * of their `call_id`, and, when the request asks for reasoning with `store: false`, each function call preceded by
 * the encrypted reasoning item the server gave with it (the real API answers 400 without it).
 */
export function parseResponsesRequest(body: unknown): ParsedRequest {
  if (!isRecord(body)) return fail('The request body must be a JSON object.', null);
  const { model, input } = body;
  if (typeof model !== 'string' || model === '') return fail('you must provide a model parameter', 'model');
  const items: JsonValue | undefined = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  if (!Array.isArray(items) || items.length === 0)
    return fail("'input' must be a string or a non-empty array.", 'input');
  const reasoningRequired = isRecord(body.reasoning) && body.store === false;
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  let reasoningSeen = false;
  for (const [index, item] of items.entries()) {
    const param = `input[${index}]`;
    if (!isRecord(item)) return fail('Each input item must be an object.', param);
    if (item.type === 'reasoning') {
      if (
        typeof item.encrypted_content !== 'string' ||
        !item.encrypted_content.startsWith(SIMULATED_REASONING_PREFIX)
      )
        return fail(
          'The encrypted content of a reasoning item could not be verified.',
          `${param}.encrypted_content`,
        );
      reasoningSeen = true;
      continue;
    }
    if (item.type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
        return fail("A function_call item needs 'call_id' and 'name'.", param);
      if (reasoningRequired && !reasoningSeen)
        return fail(
          `Item '${item.call_id}' of type 'function_call' was provided without its required 'reasoning' item.`,
          param,
        );
      toolNames.set(item.call_id, item.name);
      const call: ToolCall = {
        id: item.call_id,
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : '',
      };
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
      else messages.push({ role: 'assistant', content: '', toolCalls: [call] });
      continue;
    }
    if (item.type === 'function_call_output') {
      const name = typeof item.call_id === 'string' ? toolNames.get(item.call_id) : undefined;
      if (name === undefined)
        return fail(
          `No tool call found for function call output with call_id ${String(item.call_id)}.`,
          param,
        );
      const content = typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? '');
      const message: Message = { role: 'tool', toolCallId: item.call_id as string, toolName: name, content };
      if (looksLikeError(content)) message.isError = true;
      messages.push(message);
      reasoningSeen = false;
      continue;
    }
    if (item.type !== undefined && item.type !== 'message')
      return fail(`Invalid input item type ${JSON.stringify(item.type)}.`, param);
    const content = textOf(item.content);
    if (content === undefined)
      return fail('A message content must be a string or a list of content parts.', param);
    if (item.role === 'system' || item.role === 'developer') messages.push({ role: 'system', content });
    else if (item.role === 'user') {
      const parts = contentPartsOf(item.content);
      messages.push(parts.length === 0 ? { role: 'user', content } : { role: 'user', content, parts });
    } else if (item.role === 'assistant') messages.push({ role: 'assistant', content });
    else return fail(`Invalid value for 'role': ${JSON.stringify(item.role ?? null)}.`, `${param}.role`);
    if (item.role === 'user') reasoningSeen = false;
  }
  if (typeof body.instructions === 'string') messages.unshift({ role: 'system', content: body.instructions });
  const tools = parseTools(body.tools);
  if (typeof tools === 'string') return fail(tools, 'tools');
  const toolChoice = parseToolChoice(body.tool_choice);
  if (toolChoice === undefined) return fail("Invalid value for 'tool_choice'.", 'tool_choice');
  const request: Omit<BrainRequest, 'index'> = { model, messages, tools, toolChoice, body };
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  if (format?.type === 'json_schema' && isRecord(format.schema)) {
    request.outputSchema = {
      name: typeof format.name === 'string' ? format.name : 'response',
      schema: format.schema,
    };
  }
  const maxTokens = body.max_output_tokens;
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    !(Number.isInteger(maxTokens) && (maxTokens as number) > 0)
  )
    return fail("'max_output_tokens' must be a positive integer.", 'max_output_tokens');
  if (typeof maxTokens === 'number') request.maxOutputTokens = maxTokens;
  return {
    ok: true,
    request,
    stream: body.stream === true,
    includeUsage: true,
    parallelToolCalls: body.parallel_tool_calls !== false,
  };
}

/** The text of a message's content: a string, or its `input_text`/`output_text` parts joined. */
function textOf(content: JsonValue | undefined): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .map((part) =>
      isRecord(part) &&
      (part.type === 'input_text' || part.type === 'output_text') &&
      typeof part.text === 'string'
        ? part.text
        : '',
    )
    .join('');
}

function parseTools(raw: JsonValue | undefined): ToolDefinition[] | string {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return "'tools' must be an array.";
  const tools: ToolDefinition[] = [];
  for (const entry of raw) {
    if (
      !isRecord(entry) ||
      entry.type !== 'function' ||
      typeof entry.name !== 'string' ||
      !/^[a-zA-Z0-9_-]{1,64}$/.test(entry.name)
    ) {
      return "Each tool must be { type: 'function', name } with a name of letters, digits, _ or -.";
    }
    const inputSchema: JsonSchema = isRecord(entry.parameters)
      ? entry.parameters
      : { type: 'object', properties: {} };
    tools.push({
      name: entry.name,
      description: typeof entry.description === 'string' ? entry.description : '',
      inputSchema,
    });
  }
  return tools;
}

function parseToolChoice(raw: JsonValue | undefined): ToolChoice | undefined {
  if (raw === undefined || raw === null) return 'auto';
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  if (isRecord(raw) && raw.type === 'function' && typeof raw.name === 'string') return { name: raw.name };
  return undefined;
}
