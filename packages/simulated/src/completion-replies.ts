import type { ServerResponse } from 'node:http';
import { type CompletionParts, completionBody, completionChunks } from './completion.js';
import type { FaultKind } from './faults.js';

/**
 * How a completion reaches the client: whole, cut off by a connection reset, or cut off in the middle of its JSON; or,
 * streamed, cut at a byte offset (`cut`: reset there; `stall`: silent there), dripped slowly, or empty.
 */
export type Delivery =
  | 'whole'
  | 'reset'
  | 'truncated_json'
  | { kind: 'cut' | 'stall'; fraction: number; onStall?: (response: ServerResponse) => void }
  | { kind: 'drip'; intervalMs: number }
  | { kind: 'empty' };

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** Sends a completion, streamed as server-sent events or as one JSON body. */
export function sendCompletion(
  response: ServerResponse,
  parts: CompletionParts,
  options: { stream: boolean; includeUsage: boolean; delivery: Delivery },
  headers: Record<string, string>,
): void {
  const { delivery } = options;
  if (typeof delivery === 'object') {
    if (options.stream) sendStreamFault(response, parts, options.includeUsage, delivery, headers);
    else if (delivery.kind === 'empty') {
      response.writeHead(200, { ...headers, 'content-type': 'application/json' });
      response.end(JSON.stringify({ ...completionBody(parts), choices: [] }));
    } else sendBody(response, parts, delivery.kind === 'drip' ? 'whole' : 'reset', headers);
    return;
  }
  if (options.stream) sendStream(response, parts, options.includeUsage, delivery, headers);
  else sendBody(response, parts, delivery, headers);
}

/** A streamed answer cut or stalled at a byte offset, dripped event by event, or empty. */
function sendStreamFault(
  response: ServerResponse,
  parts: CompletionParts,
  includeUsage: boolean,
  delivery: Exclude<Delivery, string>,
  headers: Record<string, string>,
): void {
  const events = [
    ...completionChunks(parts, includeUsage).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`),
    'data: [DONE]\n\n',
  ];
  response.writeHead(200, { ...headers, ...STREAM_HEADERS });
  if (delivery.kind === 'empty') {
    response.end(
      `data: ${JSON.stringify({ id: 'chatcmpl-sim-empty', object: 'chat.completion.chunk', choices: [] })}\n\ndata: [DONE]\n\n`,
    );
    return;
  }
  if (delivery.kind === 'drip') {
    let next = 0;
    const drip = () => {
      if (response.destroyed) return;
      response.write(events[next++]!);
      if (next === events.length) response.end();
      else setTimeout(drip, delivery.intervalMs).unref();
    };
    drip();
    return;
  }
  const body = events.join('');
  // At least one byte, never the whole: the client sees part of the answer and then the fault.
  const offset = 1 + Math.floor(delivery.fraction * (Buffer.byteLength(body) - 1));
  const head = Buffer.from(body).subarray(0, offset);
  if (delivery.kind === 'cut') {
    response.write(head, () => {
      const socket = response.socket;
      if (socket !== null && !socket.destroyed) socket.resetAndDestroy();
    });
    return;
  }
  response.write(head);
  delivery.onStall?.(response);
}

function sendBody(
  response: ServerResponse,
  parts: CompletionParts,
  delivery: 'whole' | 'reset' | 'truncated_json',
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
  delivery: 'whole' | 'reset' | 'truncated_json',
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

/** The faults that change how an answer is delivered rather than what it says. */
export const DELIVERY_FAULTS: ReadonlySet<FaultKind> = new Set([
  'reset',
  'truncated_json',
  'stream_cut',
  'stall',
  'slow_drip',
  'empty_stream',
]);

/** How an answer with `fault` is delivered; `fraction` places a cut or a stall in the body. */
export function deliveryOf(
  fault: FaultKind,
  fraction: number,
  onStall: (response: ServerResponse) => void,
): Delivery {
  switch (fault) {
    case 'reset':
    case 'truncated_json':
      return fault;
    case 'stream_cut':
      return { kind: 'cut', fraction };
    case 'stall':
      return { kind: 'stall', fraction, onStall };
    case 'slow_drip':
      return { kind: 'drip', intervalMs: 100 };
    case 'empty_stream':
      return { kind: 'empty' };
    default:
      return 'whole';
  }
}
