import type { Usage } from '@keel/core';
import { invalidResponse, readServerSentEvents, streamReadError } from '@keel/core/http';
import type { OutputTool } from './request-body.js';
import { type Answer, type AnswerBlock, bodyError, isObject, parseUsage } from './response.js';

/** What reading a Messages API stream needs. */
export interface StreamInput {
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal;
  provider: string;
  requestedModel: string;
  outputTool: OutputTool | undefined;
  onTextDelta: (delta: string) => void;
  /** The most bytes of events read; more is `provider.response_too_large`. */
  maxResponseBytes: number;
}

/**
 * Reads a streamed Messages API answer. Text deltas go to `onTextDelta` as they arrive; so does the JSON of the
 * structured-output tool (unless its schema had to be wrapped), since that JSON is the answer's text. Tool inputs are
 * joined from their `input_json_delta` pieces. An `error` event is classified; a stream that ends before
 * `message_stop` is `provider.invalid_response`; an error thrown by `onTextDelta` is rethrown as it is.
 */
export async function readMessageStream(input: StreamInput): Promise<Answer> {
  const { signal, provider, outputTool } = input;
  const blocks = new Map<number, AnswerBlock | { type: 'ignored' }>();
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let model = input.requestedModel;
  let stopReason: unknown;
  let stopped = false;
  let callbackError: { error: unknown } | undefined;
  const deliver = (delta: string) => {
    try {
      input.onTextDelta(delta);
    } catch (error) {
      callbackError = { error };
      throw error;
    }
  };

  try {
    for await (const event of readServerSentEvents(input.body, {
      maxBytes: input.maxResponseBytes,
      provider,
    })) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch (error) {
        throw invalidResponse(
          provider,
          `a ${event.event} event is not JSON: ${event.data.slice(0, 200)}`,
          error,
          200,
        );
      }
      const carried = bodyError(data, provider);
      if (carried !== undefined) throw carried;
      if (!isObject(data))
        throw invalidResponse(provider, `a ${event.event} event is not an object`, undefined, 200);
      switch (data.type) {
        case 'message_start': {
          const message = data.message;
          if (isObject(message)) {
            if (typeof message.model === 'string' && message.model !== '') model = message.model;
            usage = parseUsage(message.usage, usage);
          }
          break;
        }
        case 'content_block_start': {
          const block = data.content_block;
          const index = blockIndex(data.index, provider);
          if (isObject(block) && block.type === 'text') {
            const text = typeof block.text === 'string' ? block.text : '';
            blocks.set(index, { type: 'text', text });
            if (text !== '') deliver(text);
          } else if (isObject(block) && block.type === 'tool_use') {
            if (typeof block.name !== 'string' || block.name === '') {
              throw invalidResponse(provider, `streamed tool_use block ${index} has no name`, undefined, 200);
            }
            const id = typeof block.id === 'string' && block.id !== '' ? block.id : `toolu_${index}`;
            blocks.set(index, { type: 'tool_use', id, name: block.name, input: '' });
          } else {
            blocks.set(index, { type: 'ignored' });
          }
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(blockIndex(data.index, provider));
          const delta = data.delta;
          if (block === undefined || !isObject(delta)) {
            throw invalidResponse(
              provider,
              'a content_block_delta came without its content_block_start',
              undefined,
              200,
            );
          }
          if (block.type === 'text' && delta.type === 'text_delta' && typeof delta.text === 'string') {
            block.text += delta.text;
            if (delta.text !== '') deliver(delta.text);
          } else if (block.type === 'tool_use' && delta.type === 'input_json_delta') {
            const piece = typeof delta.partial_json === 'string' ? delta.partial_json : '';
            block.input += piece;
            if (
              piece !== '' &&
              outputTool !== undefined &&
              !outputTool.wrapped &&
              block.name === outputTool.name
            ) {
              deliver(piece);
            }
          }
          break;
        }
        case 'message_delta': {
          if (isObject(data.delta) && data.delta.stop_reason !== undefined)
            stopReason = data.delta.stop_reason;
          usage = parseUsage(data.usage, usage);
          break;
        }
        case 'message_stop':
          stopped = true;
          break;
      }
      if (stopped) break;
    }
  } catch (error) {
    if (callbackError !== undefined && callbackError.error === error) throw error;
    throw streamReadError(error, signal, provider);
  }
  if (signal.aborted) throw signal.reason;
  if (!stopped) throw invalidResponse(provider, 'the event stream ended before message_stop', undefined, 200);

  const answerBlocks: AnswerBlock[] = [...blocks.entries()]
    .sort(([left], [right]) => left - right)
    .flatMap(([, block]) => {
      if (block.type === 'ignored') return [];
      // A tool without parameters streams no input at all.
      if (block.type === 'tool_use' && block.input === '') return [{ ...block, input: '{}' }];
      return [block];
    });
  return { blocks: answerBlocks, stopReason, usage, model };
}

function blockIndex(value: unknown, provider: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalidResponse(provider, 'a content block event has no index', undefined, 200);
  }
  return value;
}
