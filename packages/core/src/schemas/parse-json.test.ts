import { describe, expect, it } from 'vitest';
import { parseJson } from './parse-json.js';

describe('parseJson', () => {
  it('parses valid JSON', () => {
    expect(parseJson('{"city": "Paris", "days": [1, 2.5e3, -0.1], "ok": true, "none": null}')).toEqual({
      success: true,
      value: { city: 'Paris', days: [1, 2500, -0.1], ok: true, none: null },
    });
  });

  it.each([
    ['{"city": }', 9, "Unexpected character '}'"],
    ['{"city": "Paris",}', 16, 'Trailing comma before }'],
    ['[1, 2,]', 5, 'Trailing comma before ]'],
    ["{'city': 'Paris'}", 1, 'Expected a double-quoted property name'],
    ['{"city" "Paris"}', 8, "Expected ':' after the property name"],
    ['{"city": "Paris"', 16, "Unexpected end of input, expected ',' or '}'"],
    ['{"a": 1 "b": 2}', 8, "Expected ',' or '}' after the property value"],
    ['[1 2]', 3, "Expected ',' or ']'"],
    ['{"city": "Par', 9, 'Unterminated string'],
    ['{"a": "x\\qy"}', 8, 'Invalid escape in string'],
    ['{"a": "\\u12"}', 7, 'Invalid \\u escape in string'],
    ['{"a": 01}', 7, 'Invalid number'],
    ['{"a": 1.}', 7, 'Invalid number'],
    ['{"a": tru}', 6, "Unexpected character 't'"],
    ['{"a": 1} trailing', 9, 'Unexpected text after the JSON value'],
    ['', 0, 'Unexpected end of input'],
    ['{"a": "line\nbreak"}', 11, 'Unescaped control character in string'],
  ])('locates the fault in %j', (text, position, reason) => {
    const result = parseJson(text);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.position).toBe(position);
    expect(result.error.message).toContain(reason);
    expect(result.error.message).toContain(`at position ${position}`);
  });

  it('reports line and column for multi-line text', () => {
    const result = parseJson('{\n  "city": "Paris",\n  "days": ,\n}');
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error).toMatchObject({ line: 3, column: 11 });
    expect(result.error.message).toContain('(line 3, column 11)');
  });

  it('reports over-deep nesting instead of overflowing the stack', () => {
    const result = parseJson(`${'['.repeat(5_000)}1`);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.message).toContain('Nesting deeper than 1000 levels');
  });
});
