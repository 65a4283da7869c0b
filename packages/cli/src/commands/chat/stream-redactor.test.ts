import { describe, expect, it } from 'vitest';
import { StreamRedactor } from './stream-redactor.js';

const SECRET = 'sk-live-0123456789abcdef';

describe('StreamRedactor', () => {
  it('never lets a secret through, however the text is cut', () => {
    const text = `before ${SECRET} middle "${SECRET}" after sk-live-not-it`;
    for (let size = 1; size <= text.length; size++) {
      const redactor = new StreamRedactor([SECRET]);
      let shown = '';
      for (let start = 0; start < text.length; start += size)
        shown += redactor.push(text.slice(start, start + size));
      shown += redactor.flush();
      expect(shown, `pieces of ${size}`).toBe('before [redacted] middle "[redacted]" after sk-live-not-it');
    }
  });

  it('catches a secret as JSON escapes it, and holds back only what may begin one', () => {
    const quoted = 'key"with\\slash';
    const redactor = new StreamRedactor([quoted]);
    expect(redactor.push(`{"value":"${JSON.stringify(quoted).slice(1, -1)}"}`)).toBe(
      '{"value":"[redacted]"}',
    );
    expect(redactor.push('plain text, then key')).toBe('plain text, then ');
    expect(redactor.push('board')).toBe('keyboard');
    expect(redactor.push(' and ke')).toBe(' and ');
    expect(redactor.flush()).toBe('ke');
  });

  it('passes text through untouched when there is no secret', () => {
    const redactor = new StreamRedactor([]);
    expect(redactor.push('sk-anything')).toBe('sk-anything');
    expect(redactor.flush()).toBe('');
  });
});
