import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KeelError } from './keel-error.js';
import { secretValueRedactor } from './secret-values.js';

const TOKEN = 'zq81c5d7e9a0b2f4h6j8k0m2n4p6r8t0';

describe('secretValueRedactor', () => {
  const redactor = secretValueRedactor([`Bearer ${TOKEN}`, 'short', undefined]);

  it('finds the value as it is, URL-encoded, JSON-escaped, in base64 and by its credential alone', () => {
    const base64 = Buffer.from(TOKEN).toString('base64').replace(/=+$/, '');
    const text = `a ${TOKEN} b ${encodeURIComponent(`Bearer ${TOKEN}`)} c ${base64} d`;
    expect(redactor.text(text)).toBe('a [redacted] b [redacted] c [redacted] d');
  });

  it('finds a Basic credential decoded', () => {
    const basic = secretValueRedactor([`Basic ${Buffer.from('admin:hunter2-long').toString('base64')}`]);
    expect(basic.text('user admin:hunter2-long refused')).toBe('user [redacted] refused');
  });

  it('leaves short values and other text alone, credential patterns included', () => {
    expect(redactor.text('short token: abc')).toBe('short token: abc');
    expect(redactor.size).toBeGreaterThan(0);
  });

  it('copies JSON values, keys included, and keeps the input unchanged', () => {
    const output = { [TOKEN]: [TOKEN, 1, null, { echo: `sent ${TOKEN}` }] };
    expect(redactor.value(output)).toEqual({
      '[redacted]': ['[redacted]', 1, null, { echo: 'sent [redacted]' }],
    });
    expect(output[TOKEN]![0]).toBe(TOKEN);
  });

  it('redacts errors however deep, keeping the code', () => {
    const error = new KeelError('tool.permission_denied', `refused ${TOKEN}`, {
      data: { body: { detail: TOKEN } },
      cause: new Error(`cause ${TOKEN}`),
    });
    const copy = redactor.error(error) as KeelError;
    expect(copy.code).toBe('tool.permission_denied');
    expect(inspect(copy, { depth: 10, showHidden: true })).not.toContain(TOKEN);
    expect(JSON.stringify(copy)).not.toContain(TOKEN);
  });

  it('returns its inputs as they are without secrets', () => {
    const none = secretValueRedactor([]);
    const value = { a: 1 };
    expect(none.value(value)).toBe(value);
    expect(none.size).toBe(0);
  });
});
