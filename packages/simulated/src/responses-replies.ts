import type { ServerResponse } from 'node:http';
import type { JsonValue } from '@keel/core';
import type { CompletionParts } from './completion.js';
import { type Delivery, resetAfter } from './completion-replies.js';
import { SIMULATED_REASONING_PREFIX } from './responses-request.js';

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** A Responses API answer: the completion's parts, and whether a reasoning item comes first. */
export interface ResponsesParts extends CompletionParts {
  reasoning: boolean;
}

function outputItems(parts: ResponsesParts): Record<string, JsonValue>[] {
  const items: Record<string, JsonValue>[] = [];
  if (parts.reasoning) {
    items.push({
      type: 'reasoning',
      id: `rs_${parts.id}`,
      summary: [{ type: 'summary_text', text: 'Deciding what to do next.' }],
      encrypted_content: `${SIMULATED_REASONING_PREFIX}${parts.id}`,
    });
  }
  if (parts.content !== '') {
    items.push({
      type: 'message',
      id: `msg_${parts.id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: parts.content, annotations: [] }],
    });
  }
  parts.toolCalls.forEach((call, index) => {
    items.push({
      type: 'function_call',
      id: `fc_${parts.id}_${index}`,
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    });
  });
  return items;
}

/** The `response` object of an answer, `in_progress` (empty) or finished. */
function responseObject(parts: ResponsesParts, finished: boolean): Record<string, JsonValue> {
  const incomplete = finished && parts.finishReason === 'length';
  const reasoningTokens = parts.reasoning ? 8 : 0;
  return {
    id: parts.id,
    object: 'response',
    created_at: parts.created,
    model: parts.model,
    status: finished ? (incomplete ? 'incomplete' : 'completed') : 'in_progress',
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    output: finished ? outputItems(parts) : [],
    usage: finished
      ? {
          input_tokens: parts.promptTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: parts.completionTokens + reasoningTokens,
          output_tokens_details: { reasoning_tokens: reasoningTokens },
          total_tokens: parts.promptTokens + parts.completionTokens + reasoningTokens,
        }
      : null,
  };
}

/** The events of a streamed answer, numbered from 0: created, each item (text in word-sized deltas), completed. */
export function responsesEvents(parts: ResponsesParts): { event: string; data: Record<string, JsonValue> }[] {
  const events: { event: string; data: Record<string, JsonValue> }[] = [];
  const push = (type: string, fields: Record<string, JsonValue>) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  push('response.created', { response: responseObject(parts, false) });
  outputItems(parts).forEach((item, outputIndex) => {
    const added =
      item.type === 'message'
        ? { ...item, status: 'in_progress', content: [] }
        : { ...item, status: 'in_progress' };
    push('response.output_item.added', { output_index: outputIndex, item: added });
    if (item.type === 'message') {
      for (const piece of parts.content.match(/\S+\s*|\s+/g) ?? []) {
        push('response.output_text.delta', {
          item_id: item.id as string,
          output_index: outputIndex,
          content_index: 0,
          delta: piece,
        });
      }
    }
    if (item.type === 'function_call') {
      push('response.function_call_arguments.delta', {
        item_id: item.id as string,
        output_index: outputIndex,
        delta: item.arguments as string,
      });
    }
    push('response.output_item.done', { output_index: outputIndex, item });
  });
  const finished = responseObject(parts, true);
  push(finished.status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
    response: finished,
  });
  return events;
}

/** Writes the events of a background response after `startingAfter` (its stream resumed), and ends. */
export function sendResumedEvents(
  response: ServerResponse,
  events: readonly { event: string; data: Record<string, JsonValue> }[],
  startingAfter: number,
  headers: Record<string, string>,
): void {
  response.writeHead(200, { ...headers, ...STREAM_HEADERS });
  const after = events.filter(({ data }) => (data.sequence_number as number) > startingAfter);
  response.end(after.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}

/**
 * Sends a Responses API answer, streamed or whole, delivered whole or cut as the fault says. `keep` receives the
 * events of a streamed one (a background response, whose stream can be resumed).
 */
export function sendResponses(
  response: ServerResponse,
  parts: ResponsesParts,
  options: {
    stream: boolean;
    delivery: Delivery;
    keep?: (events: { event: string; data: Record<string, JsonValue> }[]) => void;
  },
  headers: Record<string, string>,
): void {
  if (!options.stream) {
    const text = JSON.stringify(responseObject(parts, true));
    const half = text.slice(0, Math.floor(text.length / 2));
    response.writeHead(200, { ...headers, 'content-type': 'application/json' });
    if (options.delivery === 'truncated_json') response.end(half);
    else if (options.delivery === 'reset') resetAfter(response, half);
    else response.end(text);
    return;
  }
  const numbered = responsesEvents(parts);
  options.keep?.(numbered);
  const events = numbered.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  response.writeHead(200, { ...headers, ...STREAM_HEADERS });
  if (options.delivery === 'whole') {
    response.end(events.join(''));
    return;
  }
  // Cut after about half of the events, so the client has seen some output before the fault.
  const cut = Math.max(1, Math.floor(events.length / 2));
  const head = events.slice(0, cut).join('');
  if (options.delivery === 'reset') {
    resetAfter(response, head);
    return;
  }
  const next = events[cut]!;
  response.end(head + next.slice(0, Math.floor(next.length / 2)));
}
