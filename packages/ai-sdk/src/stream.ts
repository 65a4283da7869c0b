import type { LanguageModelV3StreamPart, SharedV3ProviderMetadata } from '@ai-sdk/provider';
import { KeelError } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { type AnswerParts, mergeProviderMetadata, toReasoning, toToolCall } from './result.js';

/** Thrown for an `error` part, so that the caller classifies what the model reported. */
export class StreamErrorPart {
  constructor(readonly error: unknown) {}
}

/**
 * Reads an AI SDK stream (language model specification v3) into an answer's parts. Text deltas go to `onTextDelta`
 * as they arrive; reasoning deltas and tool calls' input (`tool-input-*`, then the `tool-call` that ends each) go to
 * `onStreamPart` when given (reasoning is kept with the answer, never delivered as text); tool calls are taken whole from their `tool-call` parts;
 * reasoning is joined by its id, with the metadata of its start, deltas and end. An `error` part is thrown as a
 * {@link StreamErrorPart}; a stream that ends without a `finish` part is `provider.invalid_response`, and so is one with no text,
 * tool call or reasoning whose finish reason the provider did not name (an empty stream is no answer); an error
 * thrown by `onTextDelta` is rethrown as it is.
 */
export async function readStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  onTextDelta: (delta: string) => void,
  provider: string,
  onStreamPart?: (part: ModelStreamPart) => void,
  onPart?: (count: number) => void,
): Promise<Omit<AnswerParts, 'headers'>> {
  // Calls this reader announced (`tool-input-start`), by the stream's id: their place among the answer's calls.
  const announced = new Map<string, number>();
  let positions = 0;
  let text = '';
  const toolCalls: AnswerParts['toolCalls'] = [];
  const reasoning = new Map<string, { text: string; metadata: SharedV3ProviderMetadata | undefined }>();
  let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;
  let modelId: string | undefined;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      onPart?.(1);
      switch (part.type) {
        case 'text-delta':
          if (part.delta === '') break;
          text += part.delta;
          onTextDelta(part.delta);
          break;
        case 'reasoning-start':
        case 'reasoning-delta':
        case 'reasoning-end': {
          const block = reasoning.get(part.id) ?? { text: '', metadata: undefined };
          if (part.type === 'reasoning-delta') {
            block.text += part.delta;
            if (part.delta !== '') onStreamPart?.({ type: 'reasoning-delta', delta: part.delta });
          }
          block.metadata = mergeProviderMetadata(block.metadata, part.providerMetadata);
          reasoning.set(part.id, block);
          break;
        }
        case 'tool-input-start':
          if (onStreamPart === undefined || part.providerExecuted === true) break;
          announced.set(part.id, positions);
          onStreamPart({
            type: 'tool-call-start',
            index: positions++,
            toolCallId: part.id,
            toolName: part.toolName,
          });
          break;
        case 'tool-input-delta': {
          const index = announced.get(part.id);
          if (index !== undefined && part.delta !== '')
            onStreamPart?.({ type: 'tool-call-delta', index, toolCallId: part.id, delta: part.delta });
          break;
        }
        case 'tool-call':
          if (part.providerExecuted !== true) {
            const call = toToolCall(part.toolCallId, part.toolName, part.input, part.providerMetadata);
            toolCalls.push(call);
            if (onStreamPart !== undefined) {
              let index = announced.get(part.toolCallId);
              if (index === undefined) {
                index = positions++;
                onStreamPart({ type: 'tool-call-start', index, toolCallId: call.id, toolName: call.name });
              }
              onStreamPart({
                type: 'tool-call-end',
                index,
                toolCallId: call.id,
                toolName: call.name,
                arguments: call.arguments,
              });
            }
          }
          break;
        case 'response-metadata':
          if (typeof part.modelId === 'string' && part.modelId !== '') modelId = part.modelId;
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw new StreamErrorPart(part.error);
      }
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (finish === undefined) {
    throw new KeelError(
      'provider.invalid_response',
      `${provider} sent an invalid response: the stream ended without a finish part`,
      { provider },
    );
  }
  // An empty stream (no text, call or reasoning, and no finish reason the provider named) is no answer at all: the
  // AI SDK's providers report `{ unified: 'other', raw: undefined }` for `data: {"choices":[]}` then `data: [DONE]`.
  if (
    text === '' &&
    toolCalls.length === 0 &&
    reasoning.size === 0 &&
    finish.finishReason.unified === 'other' &&
    finish.finishReason.raw === undefined
  ) {
    throw new KeelError(
      'provider.invalid_response',
      `${provider} sent an invalid response: the stream ended with no content and no finish reason`,
      { provider },
    );
  }
  const blocks = [...reasoning.values()].flatMap((block) => {
    const part = toReasoning(block.text, block.metadata);
    return part === undefined ? [] : [part];
  });
  return {
    text,
    toolCalls,
    reasoning: blocks,
    finishReason: finish.finishReason,
    usage: finish.usage,
    modelId,
  };
}
