import type { ModelResponse } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import { malformedResponseError, readServerSentEvents, streamReadError } from '@keel/core/http';
import { isObject } from '../response.js';
import { parseResponse, responsesBodyError } from './response.js';

/** Opens the stream of a response again after `startingAfter` (background mode), or says it cannot. */
export type ResumeStream = (responseId: string, startingAfter: number) => Promise<ReadableStream<Uint8Array>>;

/** What reading a Responses API event stream needs. */
export interface ResponsesStreamInput {
  body: ReadableStream<Uint8Array>;
  signal: AbortSignal;
  provider: string;
  requestedModel: string;
  onTextDelta: ((delta: string) => void) | undefined;
  /** Reasoning summary deltas and each function call's start, argument pieces and end, as they arrive. Defaults to none. */
  onStreamPart?: (part: ModelStreamPart) => void;
  /** Told of each chunk of bytes read (the stall watch's clock). Defaults to none. */
  onReceived?: (bytes: number) => void;
  /** The most bytes of events read, over every resumed stream; more is `provider.response_too_large`. */
  maxResponseBytes: number;
  /** Set in background mode: how a cut stream is picked up again (`starting_after` the last event's number). */
  resume?: ResumeStream;
  /** Most times a cut stream is resumed. Defaults to 0. */
  maxResumes?: number;
}

/**
 * Reads a streamed Responses API answer. `response.output_text.delta` events go to `onTextDelta` as they arrive; the
 * answer is read from the terminal event's response (`response.completed`, or `response.incomplete` when cut at the
 * token limit), the items of `response.output_item.done` standing in when that response lists no output, and the
 * streamed text when neither lists any. A
 * `response.failed` or `error` event throws its classified error. A stream that ends (or is cut) before a terminal
 * event is `provider.invalid_response`, as a cut Chat Completions stream is, so that the run loop's recovery treats
 * both alike; an error thrown by `onTextDelta` is rethrown as it is.
 *
 * In background mode (`resume` set), a stream cut after the response got its id is opened again with
 * `starting_after` the last event's `sequence_number`, up to `maxResumes` times: the deltas already delivered are not
 * delivered again.
 */
export async function readResponsesStream(input: ResponsesStreamInput): Promise<ModelResponse> {
  const { signal, provider } = input;
  const items = new Map<number, unknown>();
  let responseId: string | undefined;
  let model: string | undefined;
  let lastSequence: number | undefined;
  let terminal: Record<string, unknown> | undefined;
  let callbackError: { error: unknown } | undefined;
  let readBytes = 0;
  let body = input.body;
  let resumes = 0;
  // The text delivered as deltas: the answer's message when the terminal response and the done items list none.
  let streamedText = '';
  // Function calls announced by `response.output_item.added`, by output index: their place among the answer's calls.
  const calls = new Map<number, { index: number; callId: string; name: string }>();

  for (;;) {
    let cut: unknown;
    try {
      for await (const event of readServerSentEvents(body, {
        maxBytes: input.maxResponseBytes - readBytes,
        provider,
        onReceived: input.onReceived,
      })) {
        readBytes += event.data.length;
        if (event.data === '[DONE]') break;
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch (error) {
          throw malformedResponseError(
            provider,
            `a stream event is not JSON: ${event.data.slice(0, 200)}`,
            error,
            200,
          );
        }
        if (!isObject(data))
          throw malformedResponseError(provider, 'a stream event is not an object', undefined, 200);
        if (typeof data.sequence_number === 'number') lastSequence = data.sequence_number;
        const type = data.type;
        if (type === 'error') throw responsesBodyError(data, provider)!;
        const part = input.onStreamPart === undefined ? undefined : streamPartOf(data, calls);
        if (part !== undefined) {
          try {
            input.onStreamPart!(part);
          } catch (error) {
            callbackError = { error };
            throw error;
          }
        }
        const response = isObject(data.response) ? data.response : undefined;
        if (response !== undefined) {
          if (typeof response.id === 'string' && response.id !== '') responseId = response.id;
          if (typeof response.model === 'string' && response.model !== '') model = response.model;
        }
        if (type === 'response.failed') {
          throw (
            responsesBodyError(response, provider) ??
            malformedResponseError(provider, 'the response failed without an error', undefined, 200)
          );
        }
        if (type === 'response.output_text.delta' && typeof data.delta === 'string' && data.delta !== '') {
          streamedText += data.delta;
          try {
            input.onTextDelta?.(data.delta);
          } catch (error) {
            callbackError = { error };
            throw error;
          }
        } else if (type === 'response.output_item.done' && typeof data.output_index === 'number') {
          items.set(data.output_index, data.item);
        } else if (
          (type === 'response.completed' || type === 'response.incomplete') &&
          response !== undefined
        ) {
          terminal = response;
          break;
        }
      }
    } catch (error) {
      if (callbackError !== undefined && callbackError.error === error) throw error;
      cut = streamReadError(error, signal, provider);
      if (!resumable(cut)) throw cut;
    }
    if (signal.aborted) throw signal.reason;
    if (terminal !== undefined) break;
    // Cut, or ended, before the terminal event: picked up again where the API keeps the response, else invalid.
    if (input.resume === undefined || responseId === undefined || resumes >= (input.maxResumes ?? 0)) {
      throw (
        cut ??
        malformedResponseError(provider, 'the event stream ended before response.completed', undefined, 200)
      );
    }
    resumes++;
    body = await input.resume(responseId, lastSequence ?? 0);
  }

  let output =
    Array.isArray(terminal.output) && terminal.output.length > 0
      ? terminal.output
      : [...items.entries()].sort(([left], [right]) => left - right).map(([, item]) => item);
  if (output.length === 0 && streamedText !== '') {
    output = [
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: streamedText, annotations: [] }],
      },
    ];
  }
  return parseResponse(
    { ...terminal, output, model: terminal.model ?? model },
    provider,
    input.requestedModel,
  );
}

/** Only a cut-off stream (`provider.invalid_response` from reading) may be picked up again; anything else is final. */
function resumable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'provider.invalid_response'
  );
}

/**
 * The stream part an event stands for, if any: a reasoning summary delta, or a function call's start (its
 * `output_item.added`), argument piece or end (its `output_item.done`). Records started calls in `calls`.
 */
function streamPartOf(
  data: Record<string, unknown>,
  calls: Map<number, { index: number; callId: string; name: string }>,
): ModelStreamPart | undefined {
  const type = data.type;
  if (type === 'response.reasoning_summary_text.delta' || type === 'response.reasoning_text.delta')
    return typeof data.delta === 'string' && data.delta !== ''
      ? { type: 'reasoning-delta', delta: data.delta }
      : undefined;
  if (typeof data.output_index !== 'number') return undefined;
  const outputIndex = data.output_index;
  if (type === 'response.function_call_arguments.delta') {
    const call = calls.get(outputIndex);
    return call !== undefined && typeof data.delta === 'string' && data.delta !== ''
      ? { type: 'tool-call-delta', index: call.index, toolCallId: call.callId, delta: data.delta }
      : undefined;
  }
  const item = isObject(data.item) ? data.item : undefined;
  if (item?.type !== 'function_call') return undefined;
  if (type === 'response.output_item.added') {
    if (calls.has(outputIndex)) return undefined;
    const call = { index: calls.size, callId: String(item.call_id ?? ''), name: String(item.name ?? '') };
    calls.set(outputIndex, call);
    return { type: 'tool-call-start', index: call.index, toolCallId: call.callId, toolName: call.name };
  }
  if (type === 'response.output_item.done') {
    const call = calls.get(outputIndex);
    if (call === undefined) return undefined;
    return {
      type: 'tool-call-end',
      index: call.index,
      toolCallId: call.callId,
      toolName: call.name,
      arguments: typeof item.arguments === 'string' ? item.arguments : '',
    };
  }
  return undefined;
}
