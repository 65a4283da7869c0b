import type { ServerResponse } from 'node:http';
import { type CompletionParts, completionBody, completionChunks } from './completion.js';

/** How a completion reaches the client: whole, cut off by a connection reset, or cut off in the middle of its JSON. */
export type Delivery = 'whole' | 'reset' | 'truncated_json';

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** Sends a completion, streamed as server-sent events or as one JSON body. */
export function sendCompletion(
  response: ServerResponse,
  parts: CompletionParts,
  options: { stream: boolean; includeUsage: boolean; delivery: Delivery },
  headers: Record<string, string>,
): void {
  if (options.stream) sendStream(response, parts, options.includeUsage, options.delivery, headers);
  else sendBody(response, parts, options.delivery, headers);
}

function sendBody(
  response: ServerResponse,
  parts: CompletionParts,
  delivery: Delivery,
  headers: Record<string, string>,
) {
  const text = JSON.stringify(completionBody(parts));
  const half = text.slice(0, Math.floor(text.length / 2));
  if (delivery === 'truncated_json') {
    // A complete HTTP exchange (chunked, properly ended) whose body is only the first half of the JSON.
    response.writeHead(200, { ...headers, 'content-type': 'application/json' });
    response.end(half);
    return;
  }
  response.writeHead(200, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  if (delivery === 'reset') resetAfter(response, half);
  else response.end(text);
}

function sendStream(
  response: ServerResponse,
  parts: CompletionParts,
  includeUsage: boolean,
  delivery: Delivery,
  headers: Record<string, string>,
) {
  const events = completionChunks(parts, includeUsage).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  response.writeHead(200, { ...headers, ...STREAM_HEADERS });
  if (delivery === 'whole') {
    response.end(`${events.join('')}data: [DONE]\n\n`);
    return;
  }
  // Cut after the role chunk and about half of the content, so the client has seen some output before the fault.
  // There are always at least two events (the role and the finish reason), so `events[cut]` exists.
  const cut = Math.max(1, Math.floor(events.length / 2));
  const head = events.slice(0, cut).join('');
  if (delivery === 'reset') {
    resetAfter(response, head);
    return;
  }
  const next = events[cut]!;
  response.end(head + next.slice(0, Math.floor(next.length / 2)));
}

/** Writes `text`, then resets the connection (TCP RST) once it has left the process. */
export function resetAfter(response: ServerResponse, text: string): void {
  response.write(text, () => {
    const socket = response.socket;
    if (socket !== null && !socket.destroyed) socket.resetAndDestroy();
  });
}

const MALFORMED_BODY =
  '<!DOCTYPE html><html><head><title>Welcome</title></head><body><p>Request received.</p></body></html>\n';

/** A 200 whose body claims to be JSON (or an event stream of JSON) but is not. */
export function sendMalformed(
  response: ServerResponse,
  stream: boolean,
  headers: Record<string, string>,
): void {
  if (stream) {
    response.writeHead(200, { ...headers, ...STREAM_HEADERS });
    response.end(`data: ${MALFORMED_BODY.trim()}\n\ndata: [DONE]\n\n`);
    return;
  }
  response.writeHead(200, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(MALFORMED_BODY)),
  });
  response.end(MALFORMED_BODY);
}
