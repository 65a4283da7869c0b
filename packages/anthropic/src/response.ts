import { type FinishReason, KeelError, type ModelResponse, type ToolCall, type Usage } from '@keel/core';
import type { ReasoningPart } from '@keel/core/adapter';
import { classifyBodyError, excerpt, malformedResponseError } from '@keel/core/http';
import type { OutputTool } from './request-body.js';

type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A content block reduced to what keel keeps: text, a tool call with its input as JSON text, and thinking (with its
 * signature) or redacted thinking, kept to be sent back.
 */
export type AnswerBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** An answer as read from a whole message or assembled from a stream. */
export interface Answer {
  blocks: AnswerBlock[];
  /**
   * Every content block as the API sent it (server tool blocks included), for a paused turn, which goes back to the
   * API as it came (see `pause_turn`).
   */
  content: unknown[];
  stopReason: unknown;
  usage: Usage;
  model: string;
}

/** The error a body of the form `{ type: 'error', error: {...} }` carries, classified; undefined for other bodies. */
export function bodyError(body: unknown, provider: string): KeelError | undefined {
  if (!isObject(body) || body.type !== 'error') return undefined;
  return classifyBodyError(body, provider);
}

/** Parses a Messages API response body; anything not in that shape is `provider.invalid_response`. */
export function parseMessage(body: unknown, provider: string, requestedModel: string): Answer {
  const carried = bodyError(body, provider);
  if (carried !== undefined) throw carried;
  if (!isObject(body) || !Array.isArray(body.content)) {
    throw malformedResponseError(
      provider,
      `no content array in ${excerpt(JSON.stringify(body) ?? '')}`,
      undefined,
      200,
    );
  }
  const blocks: AnswerBlock[] = [];
  for (const [index, block] of body.content.entries()) {
    if (!isObject(block))
      throw malformedResponseError(provider, `content block ${index} is not an object`, undefined, 200);
    if (block.type === 'text' && typeof block.text === 'string')
      blocks.push({ type: 'text', text: block.text });
    if (block.type === 'tool_use') {
      if (typeof block.name !== 'string' || block.name === '') {
        throw malformedResponseError(provider, `tool_use block ${index} has no name`, undefined, 200);
      }
      const id = typeof block.id === 'string' && block.id !== '' ? block.id : `toolu_${index}`;
      blocks.push({ type: 'tool_use', id, name: block.name, input: JSON.stringify(block.input ?? {}) });
    }
    const reasoning = reasoningBlock(block);
    if (reasoning !== undefined) blocks.push(reasoning);
    // Server-tool blocks are the model's own business: keel passes on text, tool calls and reasoning.
  }
  return {
    blocks,
    content: body.content,
    stopReason: body.stop_reason,
    usage: parseUsage(body.usage),
    model: typeof body.model === 'string' ? body.model : requestedModel,
  };
}

/** A `thinking` or `redacted_thinking` block as keel keeps it; undefined for other blocks. */
export function reasoningBlock(block: JsonObject): AnswerBlock | undefined {
  if (block.type === 'thinking') {
    return {
      type: 'thinking',
      thinking: typeof block.thinking === 'string' ? block.thinking : '',
      signature: typeof block.signature === 'string' ? block.signature : '',
    };
  }
  if (block.type === 'redacted_thinking' && typeof block.data === 'string')
    return { type: 'redacted_thinking', data: block.data };
  return undefined;
}

/**
 * Input tokens include the cached ones, which the API counts apart (`cache_read_input_tokens`, kept as
 * `cachedInputTokens`, and `cache_creation_input_tokens`, kept as `cacheWriteInputTokens`). Thinking tokens are inside `output_tokens`: the
 * API reports no separate count, so `reasoningTokens` stays unset.
 */
export function parseUsage(usage: unknown, previous: Usage = { inputTokens: 0, outputTokens: 0 }): Usage {
  if (!isObject(usage)) return previous;
  const input = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
  const known = input.some((value) => typeof value === 'number');
  const parsed: Usage = {
    inputTokens: known ? input.reduce<number>((sum, value) => sum + count(value), 0) : previous.inputTokens,
    outputTokens:
      typeof usage.output_tokens === 'number' ? count(usage.output_tokens) : previous.outputTokens,
  };
  const read =
    typeof usage.cache_read_input_tokens === 'number' ? count(usage.cache_read_input_tokens) : undefined;
  const written =
    typeof usage.cache_creation_input_tokens === 'number'
      ? count(usage.cache_creation_input_tokens)
      : undefined;
  const cachedInputTokens = known ? read : previous.cachedInputTokens;
  const cacheWriteInputTokens = known ? written : previous.cacheWriteInputTokens;
  if (cachedInputTokens !== undefined) parsed.cachedInputTokens = cachedInputTokens;
  if (cacheWriteInputTokens !== undefined) parsed.cacheWriteInputTokens = cacheWriteInputTokens;
  return parsed;
}

/**
 * Turns an answer into keel's response. With structured output, the forced output tool's input becomes the
 * content and the call is dropped; when the model also called real tools, those go first and the output call is
 * dropped (the model answers again after their results).
 */
export function toModelResponse(answer: Answer, outputTool: OutputTool | undefined): ModelResponse {
  let content = answer.blocks.map((block) => (block.type === 'text' ? block.text : '')).join('');
  let toolCalls: ToolCall[] = answer.blocks
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({ id: block.id, name: block.name, arguments: block.input }));
  let finishReason = toFinishReason(answer.stopReason, toolCalls.length);
  if (outputTool !== undefined) {
    const output = toolCalls.find((call) => call.name === outputTool.name);
    toolCalls = toolCalls.filter((call) => call.name !== outputTool.name);
    if (output !== undefined && toolCalls.length === 0) {
      content = outputTool.wrapped ? unwrap(output.arguments) : output.arguments;
      if (finishReason === 'tool_calls') finishReason = 'stop';
    }
  }
  const response: ModelResponse = {
    content,
    toolCalls,
    finishReason,
    usage: answer.usage,
    model: answer.model,
  };
  const reasoning = answer.blocks.flatMap((block): ReasoningPart[] => {
    if (block.type === 'thinking') {
      return [
        block.signature === ''
          ? { type: 'thinking', text: block.thinking }
          : { type: 'thinking', text: block.thinking, signature: block.signature },
      ];
    }
    if (block.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: block.data }];
    return [];
  });
  if (reasoning.length > 0) response.reasoning = reasoning;
  return response;
}

/**
 * The failure an answer's stop reason stands for, if any. `model_context_window_exceeded`: the conversation filled
 * the model's context window before the answer ended. That is an overflowing context, not an output limit (a larger
 * `max_tokens` cannot help), so it is `provider.context_overflow`, which the run loop meets with its conversation
 * manager and then a model with a larger window; the text written so far is kept in `data.partialOutput`.
 */
export function stopReasonError(answer: Answer, provider: string): KeelError | undefined {
  if (answer.stopReason !== 'model_context_window_exceeded') return undefined;
  const partialOutput = answer.blocks.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return new KeelError(
    'provider.context_overflow',
    `${provider}: ${answer.model} stopped because the conversation filled its context window (stop_reason model_context_window_exceeded)`,
    { provider, data: { stopReason: answer.stopReason, partialOutput } },
  );
}

/**
 * Maps `stop_reason`: `end_turn` and `stop_sequence` are `stop`; `max_tokens` is `length`; `refusal` is
 * `content_filter` (`model_context_window_exceeded` is an error: see {@link stopReasonError}).
 */
export function toFinishReason(reason: unknown, toolCallCount: number): FinishReason {
  switch (reason) {
    case 'max_tokens':
      return 'length';
    case 'refusal':
      return 'content_filter';
  }
  if (toolCallCount > 0) return 'tool_calls';
  if (reason === 'end_turn' || reason === 'stop_sequence' || reason === 'tool_use') return 'stop';
  return 'other';
}

function unwrap(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && 'value' in parsed) return JSON.stringify(parsed.value);
  } catch {
    // Left as it is: the run loop's validation reports it to the model.
  }
  return text;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
