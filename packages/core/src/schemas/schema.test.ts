import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isStandardSchema, resolveSchema, type StandardSchemaV1 } from './schema.js';

describe('isStandardSchema', () => {
  it.each([
    ['a zod 4 schema', z.string(), true],
    [
      'a hand-made Standard Schema',
      { '~standard': { version: 1, vendor: 'x', validate: () => ({ value: 1 }) } },
      true,
    ],
    ['a JSON Schema', { type: 'object' }, false],
    ['a ~standard without validate', { '~standard': { version: 1 } }, false],
    ['null', null, false],
  ])('%s -> %s', (_label, value, expected) => {
    expect(isStandardSchema(value)).toBe(expected);
  });
});

describe('resolveSchema', () => {
  it('maps Standard Schema path segments (keys and { key } objects) to JSON paths', async () => {
    const schema: StandardSchemaV1<unknown, never> = {
      '~standard': {
        version: 1,
        vendor: 'custom',
        validate: () => ({
          issues: [{ message: 'bad', path: ['stops', { key: 2 }, 'first name'] }, { message: 'root' }],
        }),
        jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) },
      },
    };
    expect(await resolveSchema(schema, 'test').validate({})).toEqual({
      success: false,
      issues: [
        { path: '$.stops[2]["first name"]', message: 'bad' },
        { path: '$', message: 'root' },
      ],
    });
  });

  it('asks for the draft-07 input JSON Schema and drops $schema', () => {
    const targets: string[] = [];
    const schema: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'custom',
        validate: (value) => ({ value }),
        jsonSchema: {
          input: ({ target }) => {
            targets.push(target);
            return { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' };
          },
          output: () => ({}),
        },
      },
    };
    expect(resolveSchema(schema, 'test').jsonSchema).toEqual({ type: 'object' });
    expect(targets).toEqual(['draft-07']);
  });

  it('names the offending place in a non-JSON schema', () => {
    expect(() =>
      resolveSchema({ type: 'object', properties: { a: { minimum: Number.NaN } } }, 'tool "t" input'),
    ).toThrowError(
      expect.objectContaining({
        code: 'config.invalid',
        message: 'tool "t" input: the JSON Schema holds a non-finite number at $.properties.a.minimum',
      }),
    );
  });
});
