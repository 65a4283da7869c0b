import type { JsonValue } from '@keel/core';

/** A response body as the model is shown it. */
export interface DecodedBody {
  body: JsonValue;
  /** Present when the body was cut, is not what its type says, or is not shown. */
  note?: string;
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\b|^text\/json\b/i;
const TEXT_TYPE =
  /^text\/|^application\/(?:[\w.-]+\+)?(?:json|xml)\b|^application\/(?:javascript|x-www-form-urlencoded|x-ndjson|yaml|x-yaml)\b/i;

/**
 * Decodes a body by its content type: JSON is parsed, text is decoded as UTF-8 (a body without a type is taken for
 * text), anything else (images, archives) is left out with a note giving its size. A body cut at the size cap is
 * shown as the text it starts with, never as half a JSON document parsed by luck, and the note says so.
 */
export function decodeBody(bytes: Buffer, contentType: string | undefined, truncated: boolean): DecodedBody {
  const type = (contentType ?? '').trim();
  if (type !== '' && !TEXT_TYPE.test(type)) {
    return {
      body: null,
      note: `The body is ${type} (${bytes.length}${truncated ? '+' : ''} bytes), not text; it is not shown.`,
    };
  }
  // Streaming mode without a final flush leaves out a character cut at the end.
  const text = new TextDecoder().decode(bytes, { stream: truncated });
  if (truncated) {
    return {
      body: text,
      note: `The body was cut after ${bytes.length} bytes; this is its start, as text. Ask for less (a filter, a page, a smaller range) if you need the rest.`,
    };
  }
  if (!JSON_TYPE.test(type)) return { body: text };
  if (text.trim() === '') return { body: null };
  try {
    return { body: JSON.parse(text) as JsonValue };
  } catch {
    return { body: text, note: 'The body is labelled JSON but does not parse as JSON; it is shown as text.' };
  }
}
