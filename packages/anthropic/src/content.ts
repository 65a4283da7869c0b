import type { ContentPart } from '@keel/core';
import { type ContentLimits, isTextFile } from '@keel/core/adapter';

/**
 * Anthropic's limits on the images and files of one request, decoded bytes: an image up to 5 MiB, a PDF up to
 * 32 MiB, and 32 MiB in all (the API's request size). Checked before sending.
 */
export const ANTHROPIC_CONTENT_LIMITS: ContentLimits = {
  maxImageBytes: 5 * 1024 * 1024,
  maxFileBytes: 32 * 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
};

/** An image or file as a Messages API block: `image` (base64 or URL source), or `document` (a PDF, or text). */
export function toContentBlock(part: ContentPart): Record<string, unknown> {
  if (part.type === 'image') {
    return 'url' in part
      ? { type: 'image', source: { type: 'url', url: part.url } }
      : { type: 'image', source: { type: 'base64', media_type: part.mediaType, data: part.data } };
  }
  const block: Record<string, unknown> = isTextFile(part)
    ? {
        type: 'document',
        source: {
          type: 'text',
          media_type: 'text/plain',
          data: Buffer.from(part.data, 'base64').toString('utf8'),
        },
      }
    : { type: 'document', source: { type: 'base64', media_type: part.mediaType, data: part.data } };
  if (part.filename !== undefined) block.title = part.filename;
  return block;
}
