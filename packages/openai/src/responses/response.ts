import type { FinishReason, KeelError, ModelResponse, ToolCall, Usage } from '@keel/core';
import type { ReasoningPart } from '@keel/core/adapter';
import { classifyBodyError, excerpt, malformedResponseError } from '@keel/core/http';
import { isObject, toArgumentsText } from '../response.js';

/**
 * The error a Responses API body carries: a response whose `status` is `failed` (its `error` object), or an error
 * body or `error` stream event (`{ error: {...} }`, `{ type: 'error', code, message }`), classified as the Chat
 * Completions errors are (`rate_limit_exceeded` is `provider.rate_limited`, `server_error` `provider.server_error`,
 * `context_length_exceeded` `provider.context_overflow`, ...). Undefined when it carries none.
 */
export function responsesBodyError(body: unknown, provider: string): KeelError | undefined {
  if (!isObject(body)) return undefined;
  if (body.type === 'error') {
    const { code, message, param } = body;
    return classifyBodyError({ error: { code, message, param, type: code } }, provider, undefined);
  }
  if (isObject(body.error)) return classifyBodyError({ error: body.error }, provider, undefined);
  return undefined;
}

/**
 * Reads a Responses API `response` object into keel's terms: the text of its `message` items, its `function_call`
 * items, its reasoning items (each a `thinking` part whose `providerMetadata.openai` keeps the item id, summary and
 * encrypted content, to be sent back), the finish reason (`incomplete_details.reason`: `max_output_tokens` is
 * `length`) and usage with cached and reasoning tokens. A failed response throws its classified error; anything not
 * in that shape is `provider.invalid_response`.
 */
export function parseResponse(body: unknown, provider: string, requestedModel: string): ModelResponse {
  const carried = responsesBodyError(body, provider);
  if (carried !== undefined) throw carried;
  if (!isObject(body) || !Array.isArray(body.output)) {
    throw malformedResponseError(
      provider,
      `no output in ${excerpt(JSON.stringify(body) ?? String(body))}`,
      undefined,
      200,
    );
  }
  let content = '';
  let refusal = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const [index, item] of body.output.entries()) {
    if (!isObject(item))
      throw malformedResponseError(provider, `output[${index}] is not an object`, undefined, 200);
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') content += part.text;
        if (part.type === 'refusal' && typeof part.refusal === 'string') refusal += part.refusal;
      }
    } else if (item.type === 'function_call') {
      if (typeof item.name !== 'string' || item.name === '')
        throw malformedResponseError(provider, `function call output[${index}] has no name`, undefined, 200);
      const id = typeof item.call_id === 'string' && item.call_id !== '' ? item.call_id : `call_${index}`;
      toolCalls.push({ id, name: item.name, arguments: toArgumentsText(item.arguments) });
    } else if (item.type === 'reasoning') {
      reasoning.push(toReasoningPart(item));
    }
  }
  const refused = refusal !== '' && content === '';
  const result: ModelResponse = {
    content: refused ? refusal : content,
    toolCalls,
    finishReason: refused ? 'content_filter' : finishReasonOf(body, toolCalls.length),
    usage: parseResponsesUsage(body.usage),
    model: typeof body.model === 'string' && body.model !== '' ? body.model : requestedModel,
  };
  if (reasoning.length > 0) result.reasoning = reasoning;
  return result;
}

function toReasoningPart(item: Record<string, unknown>): ReasoningPart {
  const summary = (Array.isArray(item.summary) ? item.summary : []).flatMap((part) =>
    isObject(part) && typeof part.text === 'string' ? [part.text] : [],
  );
  const kept: Record<string, string | string[]> = {
    itemId: typeof item.id === 'string' ? item.id : '',
    summary,
  };
  if (typeof item.encrypted_content === 'string') kept.encryptedContent = item.encrypted_content;
  return { type: 'thinking', text: summary.join('\n\n'), providerMetadata: { openai: kept } };
}

function finishReasonOf(body: Record<string, unknown>, toolCallCount: number): FinishReason {
  if (body.status === 'incomplete') {
    const reason = isObject(body.incomplete_details) ? body.incomplete_details.reason : undefined;
    if (reason === 'max_output_tokens') return 'length';
    if (reason === 'content_filter') return 'content_filter';
    return 'other';
  }
  return toolCallCount > 0 ? 'tool_calls' : 'stop';
}

/**
 * Reads a Responses API `usage`: `input_tokens` (its `input_tokens_details.cached_tokens` as `cachedInputTokens`)
 * and `output_tokens` (its `output_tokens_details.reasoning_tokens` as `reasoningTokens`).
 */
export function parseResponsesUsage(usage: unknown): Usage {
  if (!isObject(usage)) return { inputTokens: 0, outputTokens: 0 };
  const parsed: Usage = { inputTokens: count(usage.input_tokens), outputTokens: count(usage.output_tokens) };
  if (
    isObject(usage.output_tokens_details) &&
    typeof usage.output_tokens_details.reasoning_tokens === 'number'
  )
    parsed.reasoningTokens = count(usage.output_tokens_details.reasoning_tokens);
  if (isObject(usage.input_tokens_details) && typeof usage.input_tokens_details.cached_tokens === 'number')
    parsed.cachedInputTokens = count(usage.input_tokens_details.cached_tokens);
  return parsed;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
