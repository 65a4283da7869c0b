import type { FinishReason, JsonValue, Message } from '@keel/core';
import type { ToolDefinition } from '@keel/core/adapter';

/** A tool call as it goes on the wire. */
export interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Everything one chat completion (streamed or not) is made of. */
export interface CompletionParts {
  id: string;
  created: number;
  model: string;
  content: string;
  toolCalls: WireToolCall[];
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
}

const FINGERPRINT = 'fp_keel_simulated';

/** A rough token count (four characters a token), the same everywhere so context windows behave predictably. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens of a prompt: every message's text and tool calls, plus the tool definitions. */
export function promptTokens(messages: readonly Message[], tools: readonly ToolDefinition[]): number {
  let total = 0;
  for (const message of messages) {
    total += 4 + estimateTokens(message.content);
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) total += estimateTokens(call.name + call.arguments);
    }
  }
  return total + (tools.length === 0 ? 0 : estimateTokens(JSON.stringify(tools)));
}

function wireFinishReason(reason: FinishReason): string {
  return reason === 'other' ? 'stop' : reason;
}

function usage(parts: CompletionParts): Record<string, JsonValue> {
  return {
    prompt_tokens: parts.promptTokens,
    completion_tokens: parts.completionTokens,
    total_tokens: parts.promptTokens + parts.completionTokens,
  };
}

/** The body of a non-streamed `chat.completion`. */
export function completionBody(parts: CompletionParts): Record<string, JsonValue> {
  const message: Record<string, JsonValue> = {
    role: 'assistant',
    content: parts.content === '' && parts.toolCalls.length > 0 ? null : parts.content,
    refusal: null,
  };
  if (parts.toolCalls.length > 0) {
    message.tool_calls = parts.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: parts.id,
    object: 'chat.completion',
    created: parts.created,
    model: parts.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: wireFinishReason(parts.finishReason) }],
    usage: usage(parts),
    system_fingerprint: FINGERPRINT,
  };
}

/**
 * The `chat.completion.chunk` objects of a streamed completion, in order: the role, the text in word-sized deltas,
 * each tool call (name first, then its arguments in two pieces), the finish reason, and the usage when asked for.
 */
export function completionChunks(parts: CompletionParts, includeUsage: boolean): Record<string, JsonValue>[] {
  const chunk = (
    delta: Record<string, JsonValue>,
    finishReason: string | null = null,
  ): Record<string, JsonValue> => ({
    id: parts.id,
    object: 'chat.completion.chunk',
    created: parts.created,
    model: parts.model,
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const chunks = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of parts.content.match(/\S+\s*|\s+/g) ?? []) chunks.push(chunk({ content: piece }));
  parts.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    const middle = Math.ceil(call.arguments.length / 2);
    for (const piece of [call.arguments.slice(0, middle), call.arguments.slice(middle)]) {
      if (piece !== '') chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, wireFinishReason(parts.finishReason)));
  if (includeUsage) {
    chunks.push({ ...chunk({}), choices: [], usage: usage(parts) });
  }
  return chunks;
}
