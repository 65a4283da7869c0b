import type { Message, ModelRequest } from '@keel/core';
import type { ToolChoice } from '@keel/core/adapter';
import { toChatContent } from './content.js';

/** How the request names its output token limit: OpenAI's current field, or the older one most compatibles read. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** How hard a reasoning model thinks before it answers (`reasoning_effort`). */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** The values `reasoningEffort` takes. */
export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high'];

/** Settings of the provider that shape the request body. */
export interface BodySettings {
  model: string;
  maxTokensField: MaxTokensField;
  strictJsonSchema: boolean;
  reasoningEffort: ReasoningEffort | undefined;
}

type WireMessage =
  | { role: 'system' | 'user'; content: string | unknown[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The Chat Completions request body for `request`. */
export function toRequestBody(
  request: ModelRequest,
  settings: BodySettings,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: settings.model,
    messages: request.messages.map(toWireMessage),
  };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
    if (request.toolChoice !== undefined) body.tool_choice = toWireToolChoice(request.toolChoice);
  }
  if (request.outputSchema !== undefined) {
    const jsonSchema: Record<string, unknown> = {
      name: request.outputSchema.name,
      schema: request.outputSchema.schema,
    };
    if (settings.strictJsonSchema) jsonSchema.strict = true;
    body.response_format = { type: 'json_schema', json_schema: jsonSchema };
  }
  if (request.maxOutputTokens !== undefined) body[settings.maxTokensField] = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (settings.reasoningEffort !== undefined) body.reasoning_effort = settings.reasoningEffort;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toWireMessage(message: Message): WireMessage {
  switch (message.role) {
    case 'system':
      return { role: message.role, content: message.content };
    case 'user':
      if (message.parts !== undefined && message.parts.length > 0)
        return { role: 'user', content: toChatContent(message.content, message.parts) };
      return { role: 'user', content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // OpenAI wants null rather than an empty string beside tool calls.
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: toWireArguments(call.arguments) },
        })),
      };
    }
    case 'tool':
      // The wire has no error flag: the run loop has already written the error into the content.
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/**
 * A tool call's arguments as sent back in the conversation: the model's own text when it is a JSON object (byte for
 * byte), `{}` otherwise. Servers such as vLLM parse these arguments to render the chat template and answer 400 when
 * they are not a JSON object, which would fail the very request that asks the model to correct them. The model
 * loses nothing it needs: the tool result that follows (keel's correction) names the parse error and quotes the text
 * around it. Anthropic's wire does the same, as its tool inputs must be objects.
 */
function toWireArguments(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return argumentsText;
  } catch {
    // Malformed: replaced below.
  }
  return '{}';
}

function toWireToolChoice(choice: ToolChoice): unknown {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}
