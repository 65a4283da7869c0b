import type { ContentPart, JsonValue } from '@keel/core';
import { isRecord } from './schema-values.js';

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function fromUrl(url: string, type: 'image' | 'file', filename?: string): ContentPart | undefined {
  const match = DATA_URL.exec(url);
  if (match === null) return type === 'image' ? { type: 'image', url } : undefined;
  const [, mediaType, data] = match as unknown as [string, string, string];
  if (type === 'image') return { type: 'image', data, mediaType: mediaType as 'image/png' };
  return filename === undefined
    ? { type: 'file', data, mediaType }
    : { type: 'file', data, mediaType, filename };
}

/**
 * The images and files of a user message's content, as keel parts: Chat Completions' `image_url` and `file` parts,
 * and the Responses API's `input_image` and `input_file`. Text parts are left to the text.
 */
export function contentPartsOf(content: JsonValue | undefined): ContentPart[] {
  if (!Array.isArray(content)) return [];
  const parts: ContentPart[] = [];
  for (const entry of content) {
    if (!isRecord(entry)) continue;
    let part: ContentPart | undefined;
    if (entry.type === 'image_url' && isRecord(entry.image_url) && typeof entry.image_url.url === 'string')
      part = fromUrl(entry.image_url.url, 'image');
    else if (entry.type === 'input_image' && typeof entry.image_url === 'string')
      part = fromUrl(entry.image_url, 'image');
    else if (entry.type === 'file' && isRecord(entry.file) && typeof entry.file.file_data === 'string') {
      const filename = typeof entry.file.filename === 'string' ? entry.file.filename : undefined;
      part = fromUrl(entry.file.file_data, 'file', filename);
    } else if (entry.type === 'input_file' && typeof entry.file_data === 'string')
      part = fromUrl(
        entry.file_data,
        'file',
        typeof entry.filename === 'string' ? entry.filename : undefined,
      );
    if (part !== undefined) parts.push(part);
  }
  return parts;
}
