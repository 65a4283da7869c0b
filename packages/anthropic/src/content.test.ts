// Images and files on the Messages wire: image and document blocks, and sizes checked before sending.
import type { ModelRequest } from '@keel/core';
import { sendJson, startHttpTestServer } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
const NOTES = Buffer.from('ship: keel').toString('base64');

function request(
  parts: NonNullable<Extract<ModelRequest['messages'][number], { role: 'user' }>['parts']>,
): ModelRequest {
  return { messages: [{ role: 'user', content: 'Read these', parts }], signal: new AbortController().signal };
}

const answer = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 1, output_tokens: 1 },
};

describe('anthropic: images and files', () => {
  it('sends images as image blocks, a PDF as a document and a text file as a text document', async () => {
    const server = await startHttpTestServer((_request, reply) => sendJson(reply, 200, answer));
    try {
      const model = anthropic('claude-test', { apiKey: 'k', baseUrl: server.url, promptCaching: false });
      await model.generate(
        request([
          { type: 'image', data: PNG, mediaType: 'image/png' },
          { type: 'image', url: 'https://example.com/cat.jpg' },
          { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
          { type: 'file', data: NOTES, mediaType: 'text/plain', filename: 'notes.txt' },
        ]),
      );
      const body = server.requests[0]!.json() as { messages: { content: unknown }[] };
      expect(body.messages[0]!.content).toEqual([
        { type: 'text', text: 'Read these' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF },
          title: 'report.pdf',
        },
        {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'ship: keel' },
          title: 'notes.txt',
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('refuses an image over 5 MiB with config.invalid, sending nothing', async () => {
    const server = await startHttpTestServer((_request, reply) => sendJson(reply, 200, answer));
    try {
      const model = anthropic('claude-test', { apiKey: 'k', baseUrl: server.url });
      const big = 'A'.repeat(7 * 1024 * 1024);
      await expect(
        model.generate(request([{ type: 'image', data: big, mediaType: 'image/png' }])),
      ).rejects.toMatchObject({
        code: 'config.invalid',
        data: { where: 'messages[0].parts[0]', limitBytes: 5 * 1024 * 1024 },
      });
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
