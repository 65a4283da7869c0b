import { responseTooLarge } from './response-size.js';

/** One server-sent event: its `event` field (`message` when absent) and its data lines joined by newlines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Options of {@link readServerSentEvents}. */
export interface ServerSentEventsOptions {
  /**
   * The most bytes read from the body; one more fails with `provider.response_too_large` (not retryable) and cancels
   * the body. Defaults to `Infinity` (providers pass their `maxResponseBytes`).
   */
  maxBytes?: number;
  /** Named in that error. Defaults to undefined. */
  provider?: string;
  /**
   * Called with the size of each chunk read, in bytes, as it arrives: a stall watch's `received` (see
   * `watchStreamStall`). Defaults to none.
   */
  onReceived?: (bytes: number) => void;
}

/**
 * Reads server-sent events from a response body as they arrive. An event is dispatched at the blank line that ends
 * it; an unfinished event at the end of the stream is dropped (per the SSE spec), which is how a cut-off stream shows.
 * Leaving the loop early cancels the body, so the connection is not left half-read.
 *
 * The work is linear in the body's size, however it is cut into chunks: each character is looked at once, and a line
 * spread over many chunks is joined once, when it ends (a 40 MB line costs what 40 MB of short lines cost).
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  options: ServerSentEventsOptions = {},
): AsyncGenerator<SseEvent> {
  const { maxBytes = Number.POSITIVE_INFINITY, provider, onReceived } = options;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const lines = new LineSplitter();
  let event = '';
  let data: string[] = [];
  let receivedBytes = 0;
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      receivedBytes += value.byteLength;
      onReceived?.(value.byteLength);
      if (receivedBytes > maxBytes) throw responseTooLarge(provider, maxBytes, 'event stream');
      for (const line of lines.push(decoder.decode(value, { stream: true }))) {
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
          event = '';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          let fieldValue = colon === -1 ? '' : line.slice(colon + 1);
          if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
          if (field === 'data') data.push(fieldValue);
          else if (field === 'event') event = fieldValue;
        }
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Cuts text arriving in pieces into lines ended by LF, CRLF or a lone CR. The part of a line not yet ended is kept as
 * a list of pieces and joined once; the next LF and CR positions are remembered, so no character is searched twice.
 */
class LineSplitter {
  private pieces: string[] = [];
  // A CR ended the last line: an LF right after it (perhaps in the next piece) belongs to the same line end.
  private afterCarriageReturn = false;

  push(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    if (this.afterCarriageReturn && text.length > 0) {
      if (text[0] === '\n') start = 1;
      this.afterCarriageReturn = false;
    }
    let nextLineFeed = text.indexOf('\n', start);
    let nextCarriageReturn = text.indexOf('\r', start);
    while (nextLineFeed !== -1 || nextCarriageReturn !== -1) {
      const end =
        nextCarriageReturn === -1 || (nextLineFeed !== -1 && nextLineFeed < nextCarriageReturn)
          ? nextLineFeed
          : nextCarriageReturn;
      lines.push(this.take(text.slice(start, end)));
      start = end + 1;
      if (end === nextCarriageReturn) {
        if (start === text.length) this.afterCarriageReturn = true;
        else if (text[start] === '\n') start++;
      }
      if (nextLineFeed !== -1 && nextLineFeed < start) nextLineFeed = text.indexOf('\n', start);
      if (nextCarriageReturn !== -1 && nextCarriageReturn < start)
        nextCarriageReturn = text.indexOf('\r', start);
    }
    if (start < text.length) this.pieces.push(text.slice(start));
    return lines;
  }

  /** The line ending with `last`: the pieces kept so far, joined, and `last`. */
  private take(last: string): string {
    if (this.pieces.length === 0) return last;
    this.pieces.push(last);
    const line = this.pieces.join('');
    this.pieces = [];
    return line;
  }
}
