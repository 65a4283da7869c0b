import type { Usage } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { malformedResponseError, readServerSentEvents, streamReadError } from '@keel/core/http';
import type { OutputTool } from './request-body.js';
import {
  type Answer,
  type AnswerBlock,
  bodyError,
  isObject,
  parseUsage,
  reasoningBlock,
} from './response.js';

/** What reading a Messages API stream needs. */
export interface StreamInput {
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal;
  provider: string;
  requestedModel: string;
  outputTool: OutputTool | undefined;
  onTextDelta: (delta: string) => void;
  /**
   * Receives thinking deltas and each tool call's start, input pieces and end (`content_block_stop`); the
   * structured-output tool is the answer's text, not a call. Defaults to none.
   */
  onStreamPart?: (part: ModelStreamPart) => void;
  /** The most bytes of events read; more is `provider.response_too_large`. */
  maxResponseBytes: number;
  /** Told the size of each chunk as it arrives (a stall watch). Defaults to none. */
  onReceived?: (bytes: number) => void;
}

/**
 * Reads a streamed Messages API answer. Text deltas go to `onTextDelta` as they arrive; so does the JSON of the
 * structured-output tool (unless its schema had to be wrapped), since that JSON is the answer's text. Tool inputs are
 * joined from their `input_json_delta` pieces, thinking from its `thinking_delta` and `signature_delta` pieces
 * (thinking is not delivered as text); `redacted_thinking` arrives whole. Every block is also rebuilt as the API
 * would have sent it unstreamed (`Answer.content`), for a paused turn to go back as it came. An `error` event is
 * classified; a stream that ends before `message_stop` is `provider.invalid_response`, and so is one with no content block and no
 * stop reason (an empty stream is no answer); an error thrown by
 * `onTextDelta` is rethrown as it is.
 */
export async function readMessageStream(input: StreamInput): Promise<Answer> {
  const { signal, provider, outputTool } = input;
  const blocks = new Map<number, AnswerBlock | { type: 'ignored' }>();
  const content = new Map<number, RawBlock>();
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
  const onStreamPart = input.onStreamPart;
  // Tool calls by block index: their place among the answer's calls, for onStreamPart.
  const callPositions = new Map<number, number>();
  const emit = (part: ModelStreamPart) => {
    if (onStreamPart === undefined) return;
    try {
      onStreamPart(part);
    } catch (error) {
      callbackError = { error };
      throw error;
    }
  };

  try {
    for await (const event of readServerSentEvents(input.body, {
      maxBytes: input.maxResponseBytes,
      provider,
      onReceived: input.onReceived,
    })) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch (error) {
        throw malformedResponseError(
          provider,
          `a ${event.event} event is not JSON: ${event.data.slice(0, 200)}`,
          error,
          200,
        );
      }
      const carried = bodyError(data, provider);
      if (carried !== undefined) throw carried;
      if (!isObject(data))
        throw malformedResponseError(provider, `a ${event.event} event is not an object`, undefined, 200);
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
          if (isObject(block)) content.set(index, { block: { ...block }, json: '' });
          const reasoning = isObject(block) ? reasoningBlock(block) : undefined;
          if (reasoning !== undefined) {
            blocks.set(index, reasoning);
          } else if (isObject(block) && block.type === 'text') {
            const text = typeof block.text === 'string' ? block.text : '';
            blocks.set(index, { type: 'text', text });
            if (text !== '') deliver(text);
          } else if (isObject(block) && block.type === 'tool_use') {
            if (typeof block.name !== 'string' || block.name === '') {
              throw malformedResponseError(
                provider,
                `streamed tool_use block ${index} has no name`,
                undefined,
                200,
              );
            }
            const id = typeof block.id === 'string' && block.id !== '' ? block.id : `toolu_${index}`;
            blocks.set(index, { type: 'tool_use', id, name: block.name, input: '' });
            if (block.name !== outputTool?.name) {
              callPositions.set(index, callPositions.size);
              emit({
                type: 'tool-call-start',
                index: callPositions.get(index)!,
                toolCallId: id,
                toolName: block.name,
              });
            }
          } else {
            blocks.set(index, { type: 'ignored' });
          }
          break;
        }
        case 'content_block_delta': {
          const index = blockIndex(data.index, provider);
          const block = blocks.get(index);
          const delta = data.delta;
          if (block === undefined || !isObject(delta)) {
            throw malformedResponseError(
              provider,
              'a content_block_delta came without its content_block_start',
              undefined,
              200,
            );
          }
          applyRawDelta(content.get(index), delta);
          if (block.type === 'thinking') {
            if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
              block.thinking += delta.thinking;
              if (delta.thinking !== '') emit({ type: 'reasoning-delta', delta: delta.thinking });
            }
            if (delta.type === 'signature_delta' && typeof delta.signature === 'string')
              block.signature += delta.signature;
          } else if (block.type === 'text' && delta.type === 'text_delta' && typeof delta.text === 'string') {
            block.text += delta.text;
            if (delta.text !== '') deliver(delta.text);
          } else if (block.type === 'tool_use' && delta.type === 'input_json_delta') {
            const piece = typeof delta.partial_json === 'string' ? delta.partial_json : '';
            block.input += piece;
            const position = callPositions.get(index);
            if (piece !== '' && position !== undefined)
              emit({ type: 'tool-call-delta', index: position, toolCallId: block.id, delta: piece });
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
        case 'content_block_stop': {
          const index = typeof data.index === 'number' ? data.index : -1;
          const block = blocks.get(index);
          const position = callPositions.get(index);
          if (block?.type === 'tool_use' && position !== undefined) {
            emit({
              type: 'tool-call-end',
              index: position,
              toolCallId: block.id,
              toolName: block.name,
              arguments: block.input === '' ? '{}' : block.input,
            });
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
  if (!stopped)
    throw malformedResponseError(provider, 'the event stream ended before message_stop', undefined, 200);
  // message_start then message_stop, with no block and no stop reason, is no answer at all: retried like a cut-off one.
  if (content.size === 0 && stopReason === undefined) {
    throw malformedResponseError(
      provider,
      'the event stream ended with no content block and no stop reason',
      undefined,
      200,
    );
  }

  const answerBlocks: AnswerBlock[] = [...blocks.entries()]
    .sort(([left], [right]) => left - right)
    .flatMap(([, block]) => {
      if (block.type === 'ignored') return [];
      // A tool without parameters streams no input at all.
      if (block.type === 'tool_use' && block.input === '') return [{ ...block, input: '{}' }];
      return [block];
    });
  const rawContent = [...content.entries()]
    .sort(([left], [right]) => left - right)
    .map(([, raw]) => finishRawBlock(raw));
  return { blocks: answerBlocks, content: rawContent, stopReason, usage, model };
}

/** A block as `content_block_start` opened it, with its deltas applied; `json` gathers a tool input's pieces. */
interface RawBlock {
  block: Record<string, unknown>;
  json: string;
}

function applyRawDelta(raw: RawBlock | undefined, delta: Record<string, unknown>): void {
  if (raw === undefined) return;
  const { block } = raw;
  const append = (key: string, piece: unknown) => {
    if (typeof piece === 'string') block[key] = (typeof block[key] === 'string' ? block[key] : '') + piece;
  };
  switch (delta.type) {
    case 'text_delta':
      append('text', delta.text);
      break;
    case 'thinking_delta':
      append('thinking', delta.thinking);
      break;
    case 'signature_delta':
      append('signature', delta.signature);
      break;
    case 'input_json_delta':
      if (typeof delta.partial_json === 'string') raw.json += delta.partial_json;
      break;
    case 'citations_delta':
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
      break;
  }
}

/** The block as an unstreamed answer holds it: a tool input's JSON pieces joined and parsed. */
function finishRawBlock(raw: RawBlock): Record<string, unknown> {
  if (raw.json === '') return raw.block;
  try {
    return { ...raw.block, input: JSON.parse(raw.json) };
  } catch {
    // Left as it came: the answer's own tool call carries the malformed text to the run loop's correction.
    return raw.block;
  }
}

function blockIndex(value: unknown, provider: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw malformedResponseError(provider, 'a content block event has no index', undefined, 200);
  }
  return value;
}
