import type { FinishReason, KeelError, ModelResponse, ToolCall, Usage } from '@keel/core';
import { classifyBodyError, excerpt, malformedResponseError } from '@keel/core/http';

type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The error carried by a body such as `{ "error": { ... } }`: some compatibles (OpenRouter, LiteLLM) answer 200 with
 * one, and they also arrive mid-stream. Undefined when the body carries none.
 */
export function bodyError(body: unknown, provider: string): KeelError | undefined {
  if (!isObject(body) || body.error === undefined || body.error === null) return undefined;
  const error = body.error;
  // OpenRouter puts the HTTP status it meant in `error.code`.
  const status = isObject(error) && typeof error.code === 'number' ? error.code : undefined;
  return classifyBodyError(body, provider, status);
}

/** Parses a Chat Completions response body; anything not in that shape is `provider.invalid_response`. */
export function parseCompletion(body: unknown, provider: string, requestedModel: string): ModelResponse {
  const carried = bodyError(body, provider);
  if (carried !== undefined) throw carried;
  const choice = isObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isObject(body) || !isObject(choice) || !isObject(choice.message)) {
    throw malformedResponseError(
      provider,
      `no choices[0].message in ${excerpt(JSON.stringify(body))}`,
      undefined,
      200,
    );
  }
  const message = choice.message;
  if (!Array.isArray(message.tool_calls ?? [])) {
    throw malformedResponseError(provider, 'choices[0].message.tool_calls is not an array', undefined, 200);
  }
  const toolCalls = ((message.tool_calls as unknown[] | undefined) ?? []).map((call, index) =>
    parseToolCall(call, index, provider),
  );
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : undefined;
  const content = typeof message.content === 'string' ? message.content : (refusal ?? '');
  return {
    content,
    toolCalls,
    finishReason:
      refusal !== undefined ? 'content_filter' : toFinishReason(choice.finish_reason, toolCalls.length),
    usage: parseUsage(body.usage),
    model: typeof body.model === 'string' ? body.model : requestedModel,
  };
}

function parseToolCall(call: unknown, index: number, provider: string): ToolCall {
  const fn = isObject(call) ? call.function : undefined;
  if (!isObject(call) || !isObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
    throw malformedResponseError(provider, `tool call ${index} has no function name`, undefined, 200);
  }
  return {
    id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`,
    name: fn.name,
    arguments: toArgumentsText(fn.arguments),
  };
}

/** Some compatibles send arguments as an object rather than JSON text; keel carries the text. */
export function toArgumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '{}';
  return JSON.stringify(value);
}

/**
 * Maps `finish_reason`. Some compatibles (Ollama among them) say `stop` while returning tool calls; keel reports
 * `tool_calls` whenever there are any, so the loop sees one meaning.
 */
export function toFinishReason(reason: unknown, toolCallCount: number): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'content_filter') return 'content_filter';
  if (toolCallCount > 0) return 'tool_calls';
  if (reason === 'stop' || reason === 'eos' || reason === undefined || reason === null) return 'stop';
  return 'other';
}

/**
 * Reads `usage`. Reasoning tokens (`completion_tokens_details.reasoning_tokens`, part of `completion_tokens`) and
 * cached input tokens (`prompt_tokens_details.cached_tokens`, part of `prompt_tokens`) are kept when the server
 * counts them, even at 0; servers that do not count them leave `reasoningTokens` and `cachedInputTokens` out.
 */
export function parseUsage(usage: unknown): Usage {
  if (!isObject(usage)) return { inputTokens: 0, outputTokens: 0 };
  const parsed: Usage = {
    inputTokens: count(usage.prompt_tokens),
    outputTokens: count(usage.completion_tokens),
  };
  const details = usage.completion_tokens_details;
  if (isObject(details) && typeof details.reasoning_tokens === 'number')
    parsed.reasoningTokens = count(details.reasoning_tokens);
  // Automatic prompt caching: the cached part of `prompt_tokens`.
  const promptDetails = usage.prompt_tokens_details;
  if (isObject(promptDetails) && typeof promptDetails.cached_tokens === 'number')
    parsed.cachedInputTokens = count(promptDetails.cached_tokens);
  return parsed;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
