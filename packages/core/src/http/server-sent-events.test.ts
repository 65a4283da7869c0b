import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { readServerSentEvents, type SseEvent } from './server-sent-events.js';

/** A body delivering `bytes` in chunks of `chunkBytes`; `cancelled` says whether the reader cancelled it. */
function body(
  bytes: Uint8Array,
  chunkBytes: number,
): { stream: ReadableStream<Uint8Array>; cancelled(): boolean } {
  let offset = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + chunkBytes));
      offset += chunkBytes;
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

async function readAll(
  text: string,
  chunkBytes: number,
  options?: Parameters<typeof readServerSentEvents>[1],
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const source = body(new TextEncoder().encode(text), chunkBytes);
  for await (const event of readServerSentEvents(source.stream, options)) events.push(event);
  return events;
}

const STREAM =
  ': keep-alive\n\n' +
  'event: message_start\ndata: {"city":"Zürich 🙂"}\n\n' +
  'data: line one\r\ndata: line two\r\n\r\n' +
  'event: ping\rdata:no space\r\r' +
  'id: 7\nretry: 10\ndata\n\n' +
  'data: [DONE]\n\n' +
  'data: unfinished';

const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"city":"Zürich 🙂"}' },
  { event: 'message', data: 'line one\nline two' },
  { event: 'ping', data: 'no space' },
  { event: 'message', data: '' },
  { event: 'message', data: '[DONE]' },
];

describe('readServerSentEvents', () => {
  it('reads LF, CRLF and lone CR line endings, comments, fields and multi-line data; drops an unfinished event', async () => {
    expect(await readAll(STREAM, 1 << 16)).toEqual(EXPECTED);
  });

  it('gives the same events however the bytes are cut: every chunk size from 1 to 9 bytes', async () => {
    for (let chunkBytes = 1; chunkBytes <= 9; chunkBytes++) {
      expect(await readAll(STREAM, chunkBytes)).toEqual(EXPECTED);
    }
  });

  it('reads one 8 MB line arriving in 64 KB chunks whole', async () => {
    const payload = 'x'.repeat(8 * 1024 * 1024);
    const events = await readAll(`data: ${payload}\n\ndata: after\n\n`, 65_536);
    expect(events).toHaveLength(2);
    expect(events[0]!.data.length).toBe(payload.length);
    expect(events[0]!.data === payload).toBe(true);
    expect(events[1]!.data).toBe('after');
  });

  it('reads many short events in one large chunk', async () => {
    const text = Array.from({ length: 20_000 }, (_, index) => `data: ${index}\n\n`).join('');
    const events = await readAll(text, text.length);
    expect(events).toHaveLength(20_000);
    expect(events[19_999]!.data).toBe('19999');
  });

  it('fails a body over maxBytes with provider.response_too_large, not retryable, and cancels it', async () => {
    const source = body(new TextEncoder().encode(`data: ${'x'.repeat(5_000)}\n\n`), 1_000);
    const error = await (async () => {
      for await (const _event of readServerSentEvents(source.stream, { maxBytes: 2_500, provider: 'p' })) {
        // Nothing arrives: the only event is larger than the cap.
      }
    })().catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'provider.response_too_large',
      retryable: false,
      provider: 'p',
      data: { maxResponseBytes: 2_500 },
    });
    expect((error as Error).message).toMatch(/more than maxResponseBytes \(2500 bytes\)/);
    expect(source.cancelled()).toBe(true);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const text = 'data: 12345\n\n';
    expect(await readAll(text, 4, { maxBytes: text.length })).toEqual([{ event: 'message', data: '12345' }]);
  });
});
