// An agent reads an image and a PDF offline, on both wires of the simulated server (Chat Completions and the
// Responses API); oversize input is refused before any request.
import { agent, type Message } from '@keel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { serverPool } from './agent-http-fixture.js';
import { simulated } from './provider.js';

const servers = serverPool();
afterEach(servers.closeAll);

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
).toString('base64');

const input: Message[] = [
  {
    role: 'user',
    content: 'What do these show?',
    parts: [
      { type: 'image', data: PNG, mediaType: 'image/png' },
      { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
    ],
  },
];

describe('images and files offline', () => {
  it.each(['chat', 'responses'] as const)(
    'an agent reads an image and a PDF over the %s wire',
    async (api) => {
      const server = await servers.start();
      const model = simulated({ server, api });
      const result = await agent({ model }).run(input);
      expect(result.status).toBe('completed');
      expect(result.output).toContain(
        'I was shown an image (image/png, 70 bytes) and a file report.pdf (application/pdf',
      );
      const body = JSON.stringify(server.requests[0]!.body);
      expect(body).toContain(`data:image/png;base64,${PNG}`);
      expect(body).toContain(`data:application/pdf;base64,${PDF}`);
      // The parts stay in the run's conversation, as given.
      expect(result.messages[0]).toEqual(input[0]);
    },
  );

  it('refuses an image over the API limit with config.invalid before any request', async () => {
    const server = await servers.start();
    const model = simulated({ server });
    const huge = 'A'.repeat(28 * 1024 * 1024); // 21 MiB decoded, over OpenAI's 20 MiB per image
    const result = await agent({ model }).run([
      { role: 'user', content: 'Look', parts: [{ type: 'image', data: huge, mediaType: 'image/jpeg' }] },
    ]);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'config.invalid' });
    expect(result.error?.message).toContain('over the 20971520 bytes the API takes');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses malformed parts when the run starts', async () => {
    const model = simulated();
    await expect(
      agent({ model }).run([
        { role: 'user', content: 'x', parts: [{ type: 'image', url: 'file:///etc/passwd' }] },
      ]),
    ).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringContaining('url must be an http or https URL'),
    });
    await model.close();
  });
});
