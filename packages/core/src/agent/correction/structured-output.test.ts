import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { extractJson, structuredOutput } from './structured-output.js';

describe('structuredOutput with a zod schema', () => {
  const verdict = structuredOutput({
    schema: z.object({ approved: z.boolean(), reason: z.string().min(3), score: z.number().default(0) }),
    name: 'verdict',
  });

  it('exposes the JSON Schema to request from the model', () => {
    expect(verdict.name).toBe('verdict');
    expect(verdict.jsonSchema).toMatchObject({
      type: 'object',
      properties: { approved: { type: 'boolean' }, reason: { type: 'string', minLength: 3 } },
      required: ['approved', 'reason'],
    });
    expect(verdict.jsonSchema.$schema).toBeUndefined();
  });

  it.each([
    ['bare JSON', '{"approved": true, "reason": "fits policy"}'],
    ['surrounding whitespace', '\n  {"approved": true, "reason": "fits policy"}  \n'],
    [
      'a ```json fence',
      'Here you go:\n```json\n{"approved": true, "reason": "fits policy"}\n```\nAnything else?',
    ],
    ['a bare ``` fence', '```\n{"approved": true, "reason": "fits policy"}\n```'],
    ['prose around the object', 'My answer is {"approved": true, "reason": "fits policy"} as requested.'],
  ])('parses %s, applying the schema (defaults included)', async (_label, text) => {
    expect(await verdict.parse(text)).toEqual({
      success: true,
      value: { approved: true, reason: 'fits policy', score: 0 },
    });
  });

  it('explains a schema mismatch with paths and the schema', async () => {
    const result = await verdict.parse('{"approved": "yes", "reason": "ok"}');
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.issues.map((issue) => issue.path)).toEqual(['$.approved', '$.reason']);
    expect(result.error.code).toBe('output.invalid');
    expect(result.error.data).toMatchObject({ stage: 'validate' });
    expect(result.error.guidance).toContain(
      'Your final answer does not match the required JSON Schema:\n- $.approved:',
    );
    expect(result.error.guidance).toContain(JSON.stringify(verdict.jsonSchema));
  });

  it('explains text that is not JSON, with the position', async () => {
    const result = await verdict.parse('{"approved": true, "reason": "fits",}');
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.code).toBe('output.invalid');
    expect(result.error.data).toMatchObject({ stage: 'parse', position: 35, line: 1, column: 36 });
    expect(result.error.guidance).toContain('It was not valid JSON: Trailing comma before } at position 35');
    expect(result.issues).toEqual([{ path: '$', message: expect.stringContaining('not valid JSON') }]);
  });

  it('treats an empty answer as invalid', async () => {
    const result = await verdict.parse('');
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.message).toContain('Unexpected end of input');
  });
});

describe('structuredOutput with a JSON Schema', () => {
  it('validates with the built-in validator', async () => {
    const list = structuredOutput<string[]>({
      schema: { type: 'array', items: { type: 'string' }, minItems: 1 },
    });
    expect(list.name).toBe('output');
    expect(await list.parse('["a", "b"]')).toEqual({ success: true, value: ['a', 'b'] });
    const empty = await list.parse('[]');
    expect(empty.success === false && empty.issues).toEqual([
      { path: '$', message: 'must have at least 1 items (has 0)' },
    ]);
  });

  it.each([
    ['no schema', {}],
    ['a bad name', { schema: { type: 'object' }, name: 'my output' }],
    ['a non-JSON schema', { schema: { type: 'object', default: new Date() } }],
  ])('rejects %s', (_label, options) => {
    expect(() => structuredOutput(options as never)).toThrowError(
      expect.objectContaining({ code: 'config.invalid' }),
    );
  });
});

describe('extractJson', () => {
  it('reports the fenced block error when a fence holds bad JSON', () => {
    const result = extractJson('```json\n{"a": }\n```');
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error).toMatchObject({ position: 6 });
  });

  it('parses arrays and scalars', () => {
    expect(extractJson('[1,2]')).toEqual({ success: true, value: [1, 2] });
    expect(extractJson(' "text" ')).toEqual({ success: true, value: 'text' });
  });
});
