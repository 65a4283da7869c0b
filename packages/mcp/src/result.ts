import type { JsonValue } from '@keel/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type CallSite, resultError } from './errors.js';

type ContentBlock = CallToolResult['content'][number];

/**
 * The output of a successful `tools/call` as the model should read it: `structuredContent` when the server sent it;
 * otherwise the text of the content blocks (one string, blocks joined by a blank line) when they are all text;
 * otherwise the blocks, with images, audio and binary resources described rather than pasted as base64 (a model
 * reads no base64, and it would fill its context).
 *
 * A result marked `isError: true` throws the server's text as a KeelError (see `resultError`); `mapResult`, when
 * given, replaces all of the above for successful results.
 */
export function toolOutput(
  result: CallToolResult,
  site: CallSite,
  mapResult?: (result: CallToolResult) => unknown,
): unknown {
  if (result.isError === true)
    throw resultError(textOf(result.content), site, describeContent(result.content));
  if (mapResult !== undefined) return mapResult(result);
  if (result.structuredContent !== undefined) return result.structuredContent;
  return describeContent(result.content);
}

/** The content as JSON: one string when every block is text, else one description per block. */
export function describeContent(content: readonly ContentBlock[] | undefined): JsonValue {
  if (content === undefined || content.length === 0) return '';
  if (content.length === 1 && content[0]!.type === 'text') return content[0]!.text;
  if (content.every((block) => block.type === 'text')) return textOf(content);
  return content.map(describeBlock);
}

function textOf(content: readonly ContentBlock[] | undefined): string {
  if (content === undefined) return '';
  const texts: string[] = [];
  for (const block of content) if (block.type === 'text') texts.push(block.text);
  return texts.join('\n\n');
}

function describeBlock(block: ContentBlock): JsonValue {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return {
        type: block.type,
        mimeType: block.mimeType,
        note: `binary data left out (${base64Bytes(block.data)} bytes)`,
      };
    case 'resource_link':
      return withOptional({ type: 'resource_link', uri: block.uri, name: block.name }, block, [
        'title',
        'description',
        'mimeType',
      ]);
    case 'resource': {
      const resource = block.resource;
      const described = withOptional({ type: 'resource', uri: resource.uri }, resource, ['mimeType']);
      if ('text' in resource && typeof resource.text === 'string')
        return { ...described, text: resource.text };
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return { ...described, note: `binary data left out (${base64Bytes(blob)} bytes)` };
    }
    default:
      return {
        type: String((block as { type?: unknown }).type),
        note: 'content of an unknown type left out',
      };
  }
}

function withOptional(
  target: Record<string, JsonValue>,
  source: object,
  keys: readonly string[],
): Record<string, JsonValue> {
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (typeof value === 'string') target[key] = value;
  }
  return target;
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
