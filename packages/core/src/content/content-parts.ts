import { KeelError } from '../errors/keel-error.js';
import type { ContentPart, Message } from '../spec/model.js';

/** Size limits of one provider's API for the images and files of one request, in bytes (decoded). */
export interface ContentLimits {
  /** The largest image sent as bytes. */
  maxImageBytes: number;
  /** The largest file (PDF or text). */
  maxFileBytes: number;
  /** The most bytes of images and files in one request, all messages together. */
  maxTotalBytes: number;
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The decoded size of base64 `data`, in bytes, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/** Whether a file part is text, sent as text: `text/*`, JSON, XML, YAML. */
export function isTextFile(part: Extract<ContentPart, { type: 'file' }>): boolean {
  return /^text\/|^application\/(json|xml|yaml|x-yaml)\b/.test(part.mediaType);
}

/** A `data:` URL of base64 bytes. */
export function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

/**
 * What is wrong with a user message's `parts`, as a message saying what to fix; undefined when they are well formed:
 * an array of images (an http(s) `url`, or base64 `data` of a PNG, JPEG, GIF or WebP `mediaType`) and files (base64
 * `data` with a `mediaType`).
 */
export function contentPartsProblem(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return 'parts must be an array of images and files';
  for (const [index, part] of parts.entries()) {
    const candidate = part as Record<string, unknown> | null;
    const where = `parts[${index}]`;
    if (candidate?.type === 'image' && typeof candidate.url === 'string') {
      if (!/^https?:\/\//.test(candidate.url)) return `${where}.url must be an http or https URL`;
      continue;
    }
    if (candidate?.type !== 'image' && candidate?.type !== 'file')
      return `${where} must be { type: 'image', url } or { type: 'image' | 'file', data, mediaType }`;
    if (typeof candidate.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(candidate.data))
      return `${where}.data must be base64 text`;
    if (typeof candidate.mediaType !== 'string' || candidate.mediaType === '')
      return `${where}.mediaType must be a media type such as image/png or application/pdf`;
    if (candidate.type === 'image' && !IMAGE_TYPES.has(candidate.mediaType))
      return `${where}.mediaType must be one of ${[...IMAGE_TYPES].join(', ')} (got ${candidate.mediaType})`;
  }
  return undefined;
}

/**
 * Checks the images and files of `messages` against a provider's limits before anything is sent: a part too large,
 * or too many bytes in all, is `config.invalid` (not retried: the same request would fail again), its `data`
 * naming the message, the part, its size and the limit.
 */
export function checkContentSizes(
  messages: readonly Message[],
  limits: ContentLimits,
  provider: string,
): void {
  let total = 0;
  messages.forEach((message, messageIndex) => {
    if (message.role !== 'user' || message.parts === undefined) return;
    message.parts.forEach((part, partIndex) => {
      if (!('data' in part)) return;
      const sizeBytes = base64Bytes(part.data);
      const limitBytes = part.type === 'image' ? limits.maxImageBytes : limits.maxFileBytes;
      const where = `messages[${messageIndex}].parts[${partIndex}]`;
      if (sizeBytes > limitBytes) {
        throw new KeelError(
          'config.invalid',
          `${provider}: ${where} is a ${part.type} of ${sizeBytes} bytes, over the ${limitBytes} bytes the API takes; send a smaller one`,
          { provider, data: { where, sizeBytes, limitBytes } },
        );
      }
      total += sizeBytes;
    });
  });
  if (total > limits.maxTotalBytes) {
    throw new KeelError(
      'config.invalid',
      `${provider}: the images and files of the conversation make ${total} bytes, over the ${limits.maxTotalBytes} bytes one request takes; send fewer`,
      { provider, data: { sizeBytes: total, limitBytes: limits.maxTotalBytes } },
    );
  }
}
