import type { ModelResponse, ToolCall } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { malformedResponseError, readServerSentEvents, streamReadError } from '@keel/core/http';
import { bodyError, isObject, parseUsage, toArgumentsText, toFinishReason } from './response.js';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Whether `tool-call-start` went to `onStreamPart` (once the name is known). */
  started: boolean;
}

/** What reading a Chat Completions stream needs. */
export interface StreamInput {
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal;
  provider: string;
  requestedModel: string;
  onTextDelta: (delta: string) => void;
  /** Receives reasoning deltas and each tool call's start, argument pieces and end. Defaults to none. */
  onStreamPart?: (part: ModelStreamPart) => void;
  /** The most bytes of events read; more is `provider.response_too_large`. */
  maxResponseBytes: number;
  /** Told the size of each chunk as it arrives (a stall watch). Defaults to none. */
  onReceived?: (bytes: number) => void;
}

/**
 * Reads a streamed Chat Completions answer: text deltas go to `onTextDelta` as they arrive, tool call fragments are
 * joined by their `index`. A refusal (`delta.refusal`) ends with finish reason `content_filter` and the refusal as
 * content, as an unstreamed one does, and is not delivered as text. A stream that ends before `[DONE]` or a finish
 * reason is `provider.invalid_response`, and so is one that ends with no choice, no content and no finish reason (an
 * empty stream is no answer); an `error` chunk is classified; an error thrown by `onTextDelta` is rethrown
 * as it is.
 */
export async function readCompletionStream(input: StreamInput): Promise<ModelResponse> {
  const { signal, provider } = input;
  let content = '';
  let refusal = '';
  const calls = new Map<number, PartialToolCall>();
  let finishReason: unknown;
  let usage: unknown;
  let model: string | undefined;
  let done = false;
  let sawChoice = false;
  let callbackError: { error: unknown } | undefined;
  const onStreamPart = input.onStreamPart;
  const emit =
    onStreamPart === undefined
      ? undefined
      : (part: ModelStreamPart): void => {
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
      if (event.data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch (error) {
        throw malformedResponseError(
          provider,
          `a stream chunk is not JSON: ${event.data.slice(0, 200)}`,
          error,
          200,
        );
      }
      const carried = bodyError(chunk, provider);
      if (carried !== undefined) throw carried;
      if (!isObject(chunk))
        throw malformedResponseError(provider, 'a stream chunk is not an object', undefined, 200);
      if (typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model;
      if (isObject(chunk.usage)) usage = chunk.usage;
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (!isObject(choice)) continue;
      sawChoice = true;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isObject(delta)) continue;
      if (typeof delta.content === 'string' && delta.content !== '') {
        content += delta.content;
        try {
          input.onTextDelta(delta.content);
        } catch (error) {
          callbackError = { error };
          throw error;
        }
      }
      // A refusal streams in its own field; like an unstreamed one it is not the answer, so it is not delivered.
      if (typeof delta.refusal === 'string') refusal += delta.refusal;
      // Compatible servers (DeepSeek, vLLM, OpenRouter) stream reasoning in one of these fields.
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (emit !== undefined && typeof reasoning === 'string' && reasoning !== '')
        emit({ type: 'reasoning-delta', delta: reasoning });
      if (Array.isArray(delta.tool_calls)) {
        for (const fragment of delta.tool_calls) addToolCallFragment(calls, fragment, provider, emit);
      }
    }
  } catch (error) {
    if (callbackError !== undefined && callbackError.error === error) throw error;
    throw streamReadError(error, signal, provider);
  }
  if (signal.aborted) throw signal.reason;
  if (!done && finishReason === undefined) {
    throw malformedResponseError(
      provider,
      'the event stream ended before [DONE] or a finish reason',
      undefined,
      200,
    );
  }
  // `data: {"choices":[]}` then `data: [DONE]` is no answer at all, not an empty one: retried like a cut-off stream.
  if (!sawChoice || (content === '' && refusal === '' && calls.size === 0 && finishReason === undefined)) {
    throw malformedResponseError(
      provider,
      'the event stream ended with no choice, no content and no finish reason',
      undefined,
      200,
    );
  }
  if (emit !== undefined) endToolCalls(calls, emit);

  const toolCalls: ToolCall[] = [...calls.entries()]
    .sort(([left], [right]) => left - right)
    .map(([index, call]) => {
      if (call.name === '')
        throw malformedResponseError(provider, `streamed tool call ${index} has no name`, undefined, 200);
      return {
        id: callId(call, index),
        name: call.name,
        arguments: call.arguments || '{}',
      };
    });
  const refused = refusal !== '';
  return {
    content: refused && content === '' ? refusal : content,
    toolCalls,
    finishReason: refused ? 'content_filter' : toFinishReason(finishReason, toolCalls.length),
    usage: parseUsage(usage),
    model: model ?? input.requestedModel,
  };
}

/** Joins one `delta.tool_calls[]` fragment into the call at its index: id and name arrive once, arguments in pieces. */
function addToolCallFragment(
  calls: Map<number, PartialToolCall>,
  fragment: unknown,
  provider: string,
  emit: ((part: ModelStreamPart) => void) | undefined,
): void {
  if (!isObject(fragment))
    throw malformedResponseError(provider, 'a streamed tool call is not an object', undefined, 200);
  // Some compatibles omit `index` when they send each call whole: place it after the others.
  const index = typeof fragment.index === 'number' ? fragment.index : calls.size;
  let call = calls.get(index);
  if (call === undefined) {
    call = { id: '', name: '', arguments: '', started: false };
    calls.set(index, call);
  }
  if (typeof fragment.id === 'string' && fragment.id !== '') call.id = fragment.id;
  const fn = fragment.function;
  let piece = '';
  if (isObject(fn)) {
    if (typeof fn.name === 'string' && fn.name !== '') call.name = fn.name;
    if (fn.arguments !== undefined && fn.arguments !== null) piece = toArgumentsText(fn.arguments);
    call.arguments += piece;
  }
  if (emit === undefined || call.name === '') return;
  const toolCallId = callId(call, index);
  if (!call.started) {
    call.started = true;
    emit({ type: 'tool-call-start', index, toolCallId, toolName: call.name });
    // Pieces that came before the name go out with the start.
    piece = call.arguments;
  }
  if (piece !== '') emit({ type: 'tool-call-delta', index, toolCallId, delta: piece });
}

/** The stream ended well: every call's arguments are complete. */
function endToolCalls(calls: Map<number, PartialToolCall>, emit: (part: ModelStreamPart) => void): void {
  for (const [index, call] of [...calls.entries()].sort(([left], [right]) => left - right)) {
    if (!call.started) continue;
    const toolCallId = callId(call, index);
    emit({
      type: 'tool-call-end',
      index,
      toolCallId,
      toolName: call.name,
      arguments: call.arguments || '{}',
    });
  }
}

function callId(call: PartialToolCall, index: number): string {
  return call.id === '' ? `call_${index}` : call.id;
}
