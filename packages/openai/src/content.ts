import type { ContentPart } from '@keel/core';
import { type ContentLimits, dataUrl, isTextFile } from '@keel/core/adapter';

/**
 * OpenAI's limits on the images and files of one request, decoded bytes: an image up to 20 MiB, a file (PDF) up to
 * 32 MiB, 50 MiB in all. Checked before sending, on both APIs.
 */
export const OPENAI_CONTENT_LIMITS: ContentLimits = {
  maxImageBytes: 20 * 1024 * 1024,
  maxFileBytes: 32 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
};

/** A text file's content as a text part: its name and its text, decoded from UTF-8. */
export function textFileText(part: Extract<ContentPart, { type: 'file' }>): string {
  const name = part.filename === undefined ? '' : ` name="${part.filename}"`;
  return `<file${name} type="${part.mediaType}">\n${Buffer.from(part.data, 'base64').toString('utf8')}\n</file>`;
}

/** A user message's text and parts as Chat Completions content parts (`text`, `image_url`, `file`). */
export function toChatContent(text: string, parts: readonly ContentPart[]): unknown[] {
  const content: unknown[] = text === '' ? [] : [{ type: 'text', text }];
  for (const part of parts) {
    if (part.type === 'image') {
      content.push({
        type: 'image_url',
        image_url: { url: 'url' in part ? part.url : dataUrl(part.mediaType, part.data) },
      });
    } else if (isTextFile(part)) {
      content.push({ type: 'text', text: textFileText(part) });
    } else {
      const file: Record<string, string> = { file_data: dataUrl(part.mediaType, part.data) };
      file.filename = part.filename ?? 'file';
      content.push({ type: 'file', file });
    }
  }
  return content;
}

/** A user message's text and parts as Responses API input content (`input_text`, `input_image`, `input_file`). */
export function toResponsesContent(text: string, parts: readonly ContentPart[]): unknown[] {
  const content: unknown[] = text === '' ? [] : [{ type: 'input_text', text }];
  for (const part of parts) {
    if (part.type === 'image') {
      const url = 'url' in part ? part.url : dataUrl(part.mediaType, part.data);
      content.push({ type: 'input_image', image_url: url, detail: 'auto' });
    } else if (isTextFile(part)) {
      content.push({ type: 'input_text', text: textFileText(part) });
    } else {
      content.push({
        type: 'input_file',
        filename: part.filename ?? 'file',
        file_data: dataUrl(part.mediaType, part.data),
      });
    }
  }
  return content;
}
