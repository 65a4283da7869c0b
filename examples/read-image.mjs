// An agent reads an image and a PDF, offline: the simulated provider describes what it was shown, on OpenAI's
// Chat Completions wire and on its Responses API wire. No key, no network (the simulated server runs on 127.0.0.1).
// Try, after `npm run build`: node examples/read-image.mjs
import { agent } from '@keel/core';
import { simulated } from '@keel/simulated';

// A 1×1 PNG and a one-line PDF, as base64 (read yours with readFileSync(path).toString('base64')).
const png =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n').toString('base64');

for (const api of ['chat', 'responses']) {
  const model = simulated({ api });
  const result = await agent({ model }).run([
    {
      role: 'user',
      content: 'What do these show?',
      parts: [
        { type: 'image', data: png, mediaType: 'image/png' },
        { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'report.pdf' },
      ],
    },
  ]);
  console.log(`${api}: ${result.status}: ${result.output}`);
  await model.close();
}
