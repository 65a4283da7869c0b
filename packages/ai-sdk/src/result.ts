import type {
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
  SharedV3Headers,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import {
  type FinishReason,
  type JsonValue,
  KeelError,
  type ModelResponse,
  type ToolCall,
  type Usage,
} from '@keel/core';
import type { ProviderMetadata, ReasoningPart } from '@keel/core/adapter';

/** What the answer of one call is made from, whether it came whole or streamed. */
export interface AnswerParts {
  text: string;
  toolCalls: ToolCall[];
  reasoning: ReasoningPart[];
  finishReason: LanguageModelV3FinishReason | undefined;
  usage: LanguageModelV3Usage | undefined;
  modelId: string | undefined;
  headers: SharedV3Headers | undefined;
}

/** The parts of a whole (`doGenerate`) answer. */
export function partsOfContent(
  content: readonly LanguageModelV3Content[],
): Omit<AnswerParts, 'finishReason' | 'usage' | 'modelId' | 'headers'> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') {
      const block = toReasoning(part.text, part.providerMetadata);
      if (block !== undefined) reasoning.push(block);
    } else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      toolCalls.push(toToolCall(part.toolCallId, part.toolName, part.input, part.providerMetadata));
    }
    // Files, sources and the provider's own tool calls and results (server tools) are not keel's to keep.
  }
  return { text, toolCalls, reasoning };
}

/** A tool call as keel keeps it: the input as JSON text, the provider's metadata to give back with it. */
export function toToolCall(
  id: string,
  name: string,
  input: string,
  metadata: SharedV3ProviderMetadata | undefined,
): ToolCall {
  const call: ToolCall = { id, name, arguments: input === '' ? '{}' : input };
  const providerMetadata = toProviderMetadata(metadata);
  if (providerMetadata !== undefined) call.providerMetadata = providerMetadata;
  return call;
}

/**
 * A reasoning part as keel keeps it. The AI SDK's Anthropic provider puts a thinking block's signature, or a redacted
 * block's data, in its metadata: those become keel's own `signature` and `redacted_thinking`, so that keel's
 * Anthropic provider can send them back too. Empty reasoning without metadata carries nothing and is dropped.
 */
export function toReasoning(
  text: string,
  metadata: SharedV3ProviderMetadata | undefined,
): ReasoningPart | undefined {
  const providerMetadata = toProviderMetadata(metadata);
  const anthropic = providerMetadata?.anthropic;
  if (typeof anthropic?.redactedData === 'string') {
    return { type: 'redacted_thinking', data: anthropic.redactedData, providerMetadata };
  }
  if (text === '' && providerMetadata === undefined) return undefined;
  const part: ReasoningPart = { type: 'thinking', text };
  if (typeof anthropic?.signature === 'string') part.signature = anthropic.signature;
  if (providerMetadata !== undefined) part.providerMetadata = providerMetadata;
  return part;
}

/** Provider metadata as plain JSON (the AI SDK's may hold `undefined`s), or undefined when there is none. */
export function toProviderMetadata(
  metadata: SharedV3ProviderMetadata | undefined,
): ProviderMetadata | undefined {
  if (metadata === undefined || metadata === null || Object.keys(metadata).length === 0) return undefined;
  return JSON.parse(JSON.stringify(metadata)) as Record<string, Record<string, JsonValue>>;
}

/** Metadata merged by provider key, as the AI SDK streams it in pieces (a signature at the end of a block, say). */
export function mergeProviderMetadata(
  into: SharedV3ProviderMetadata | undefined,
  more: SharedV3ProviderMetadata | undefined,
): SharedV3ProviderMetadata | undefined {
  if (more === undefined) return into;
  const merged: SharedV3ProviderMetadata = { ...(into ?? {}) };
  for (const [provider, values] of Object.entries(more))
    merged[provider] = { ...merged[provider], ...values };
  return merged;
}

/**
 * keel's response from an answer's parts. The unified finish reason maps one to one (`tool-calls` whenever there are
 * calls, as keel's own providers report it); `error` is a provider fault (`provider.server_error`, retryable).
 */
export function toModelResponse(parts: AnswerParts, provider: string, requestedModel: string): ModelResponse {
  const finish = parts.finishReason;
  if (finish?.unified === 'error') {
    throw new KeelError(
      'provider.server_error',
      `${provider}: the model stopped on an error (finish reason ${JSON.stringify(finish.raw ?? 'error')})`,
      { provider, data: { finishReason: finish.raw ?? 'error' } },
    );
  }
  const response: ModelResponse = {
    content: parts.text,
    toolCalls: parts.toolCalls,
    finishReason: toFinishReason(finish, parts.toolCalls.length),
    usage: toUsage(parts.usage),
    model: parts.modelId ?? requestedModel,
  };
  if (parts.reasoning.length > 0) response.reasoning = parts.reasoning;
  const requestId = parts.headers?.['x-request-id'] ?? parts.headers?.['request-id'];
  if (typeof requestId === 'string' && requestId !== '') response.requestId = requestId;
  return response;
}

function toFinishReason(
  finish: LanguageModelV3FinishReason | undefined,
  toolCallCount: number,
): FinishReason {
  switch (finish?.unified) {
    case 'length':
      return 'length';
    case 'content-filter':
      return 'content_filter';
  }
  if (toolCallCount > 0) return 'tool_calls';
  if (finish === undefined || finish.unified === 'stop') return 'stop';
  return finish.unified === 'tool-calls' ? 'stop' : 'other';
}

/**
 * Usage in keel's terms; a count the provider did not give is 0, reasoning and cache counts (`inputTokens.cacheRead`,
 * `inputTokens.cacheWrite`) only when it gave them.
 */
export function toUsage(usage: LanguageModelV3Usage | undefined): Usage {
  const result: Usage = {
    inputTokens: count(usage?.inputTokens?.total),
    outputTokens: count(usage?.outputTokens?.total),
  };
  const reasoning = usage?.outputTokens?.reasoning;
  if (typeof reasoning === 'number') result.reasoningTokens = count(reasoning);
  const cacheRead = usage?.inputTokens?.cacheRead;
  if (typeof cacheRead === 'number') result.cachedInputTokens = count(cacheRead);
  const cacheWrite = usage?.inputTokens?.cacheWrite;
  if (typeof cacheWrite === 'number') result.cacheWriteInputTokens = count(cacheWrite);
  return result;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
