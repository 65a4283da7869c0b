import { describe, expect, it } from 'vitest';
import { toPrompt } from './prompt.js';

describe('AI SDK prompt: images and files', () => {
  it('turns a user message parts into file parts after its text', () => {
    const prompt = toPrompt([
      {
        role: 'user',
        content: 'Read these',
        parts: [
          { type: 'image', data: 'iVBORw0K', mediaType: 'image/png' },
          { type: 'image', url: 'https://example.com/cat.jpg' },
          { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'report.pdf' },
        ],
      },
    ]);
    expect(prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read these' },
          { type: 'file', data: 'iVBORw0K', mediaType: 'image/png' },
          { type: 'file', data: new URL('https://example.com/cat.jpg'), mediaType: 'image/*' },
          { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'report.pdf' },
        ],
      },
    ]);
  });
});
