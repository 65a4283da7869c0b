/** One server-sent event: its `event` field (`message` when absent) and its data lines joined by newlines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Reads server-sent events from a response body as they arrive. An event is dispatched at the blank line that ends
 * it; an unfinished event at the end of the stream is dropped (per the SSE spec), which is how a cut-off stream shows.
 * Leaving the loop early cancels the body, so the connection is not left half-read.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      buffer += decoder.decode(value, { stream: true });
      let lineEnd = nextLineEnd(buffer);
      while (lineEnd !== -1) {
        const line = buffer.slice(0, lineEnd);
        const separator = buffer[lineEnd] === '\r' && buffer[lineEnd + 1] === '\n' ? 2 : 1;
        buffer = buffer.slice(lineEnd + separator);
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
          event = '';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          let value = colon === -1 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'data') data.push(value);
          else if (field === 'event') event = value;
        }
        lineEnd = nextLineEnd(buffer);
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Index of the first line terminator (LF, CRLF or lone CR), or -1 when the buffer holds no complete line yet. */
function nextLineEnd(buffer: string): number {
  for (let index = 0; index < buffer.length; index++) {
    const character = buffer[index];
    if (character === '\n') return index;
    // A CR at the end of the buffer may be the first half of CRLF: wait for the next chunk.
    if (character === '\r') return index + 1 < buffer.length ? index : -1;
  }
  return -1;
}
