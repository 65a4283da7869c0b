import { describe, expect, it } from 'vitest';
import { formatJsonPath } from './json-path.js';
import { validateJsonSchema } from './json-schema.js';

const weather = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2, maxLength: 40 },
    units: { type: 'string', enum: ['metric', 'imperial'] },
    days: { type: 'integer', minimum: 1, maximum: 14 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
  },
  required: ['city'],
  additionalProperties: false,
};

describe('validateJsonSchema', () => {
  it('accepts a valid value', () => {
    expect(validateJsonSchema(weather, { city: 'Paris', units: 'metric', days: 3, tags: ['a'] })).toEqual([]);
  });

  it('reports each problem with a JSON path', () => {
    expect(validateJsonSchema(weather, { units: 'kelvin', days: 2.5, tags: ['a', 3], extra: true })).toEqual([
      { path: '$.city', message: 'required property is missing' },
      { path: '$.units', message: 'must be one of "metric", "imperial"' },
      { path: '$.days', message: 'expected integer, received number' },
      { path: '$.tags[1]', message: 'expected string, received integer' },
      { path: '$.extra', message: 'unexpected property "extra" (not in the schema)' },
    ]);
  });

  it.each([
    [{ type: 'string' }, 5, 'expected string, received integer'],
    [{ type: ['string', 'null'] }, 5, 'expected string or null, received integer'],
    [{ type: 'object' }, [], 'expected object, received array'],
    [{ type: 'array' }, {}, 'expected array, received object'],
    [{ type: 'number' }, '1', 'expected number, received string'],
    [{ type: 'boolean' }, null, 'expected boolean, received null'],
    [{ const: 'yes' }, 'no', 'must be equal to "yes"'],
    [{ enum: [{ a: 1 }] }, { a: 2 }, 'must be one of {"a":1}'],
    [{ minLength: 3 }, 'ab', 'must be at least 3 characters long (is 2)'],
    [{ maxLength: 2 }, '😀😀😀', 'must be at most 2 characters long (is 3)'],
    [{ pattern: '^[A-Z]{3}$' }, 'abc', 'must match pattern ^[A-Z]{3}$'],
    [{ minimum: 1 }, 0, 'must be at least 1'],
    [{ maximum: 1 }, 2, 'must be at most 1'],
    [{ exclusiveMinimum: 1 }, 1, 'must be greater than 1'],
    [{ exclusiveMaximum: 1 }, 1, 'must be less than 1'],
    [{ minimum: 1, exclusiveMinimum: true }, 1, 'must be greater than 1'],
    [{ multipleOf: 0.5 }, 0.7, 'must be a multiple of 0.5'],
    [{ minItems: 2 }, [1], 'must have at least 2 items (has 1)'],
    [{ uniqueItems: true }, [1, { a: 1 }, { a: 1 }], 'items must be unique (item 2 repeats an earlier one)'],
    [{ minProperties: 1 }, {}, 'must have at least 1 properties'],
    [{ not: { type: 'string' } }, 'x', 'must not match the excluded schema'],
    [false, 1, 'no value is allowed here'],
  ])('%j rejects %j', (schema, value, message) => {
    expect(validateJsonSchema(schema, value)).toEqual([{ path: '$', message }]);
  });

  it.each([
    [{ type: 'integer' }, 3],
    [{ type: 'number' }, 3.5],
    [{ type: ['string', 'null'] }, null],
    [{ type: 'string', nullable: true }, null],
    [{ maxLength: 2 }, '😀😀'],
    [{ multipleOf: 0.1 }, 0.3],
    [{ pattern: 'b' }, 'abc'],
    [true, { anything: [1] }],
    [{ format: 'email' }, 'not checked'],
  ])('%j accepts %j', (schema, value) => {
    expect(validateJsonSchema(schema, value)).toEqual([]);
  });

  it('checks anyOf (such as zod nullable) and explains when nothing matches', () => {
    const schema = { anyOf: [{ type: 'integer' }, { type: 'null' }] };
    expect(validateJsonSchema(schema, null)).toEqual([]);
    expect(validateJsonSchema(schema, 4)).toEqual([]);
    expect(validateJsonSchema(schema, 'x')).toEqual([
      {
        path: '$',
        message:
          'does not match any of the 2 allowed shapes: (1) expected integer, received string; (2) expected null, received string',
      },
    ]);
  });

  it('checks oneOf: exactly one alternative must match', () => {
    const schema = { oneOf: [{ type: 'number' }, { type: 'integer' }] };
    expect(validateJsonSchema(schema, 1.5)).toEqual([]);
    expect(validateJsonSchema(schema, 2)).toEqual([
      { path: '$', message: 'matches 2 of the allowed shapes, but must match exactly one' },
    ]);
  });

  it('checks allOf', () => {
    expect(validateJsonSchema({ allOf: [{ minimum: 0 }, { maximum: 5 }] }, 9)).toEqual([
      { path: '$', message: 'must be at most 5' },
    ]);
  });

  it('checks tuples in draft 7 (items array) and 2020-12 (prefixItems)', () => {
    const draft7 = { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false };
    expect(validateJsonSchema(draft7, ['a', 1])).toEqual([]);
    expect(validateJsonSchema(draft7, [1, 'a', true])).toEqual([
      { path: '$[0]', message: 'expected string, received integer' },
      { path: '$[1]', message: 'expected number, received string' },
      { path: '$[2]', message: 'no value is allowed here' },
    ]);
    const draft2020 = { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'boolean' } };
    expect(validateJsonSchema(draft2020, ['a', true, 'b'])).toEqual([
      { path: '$[2]', message: 'expected boolean, received string' },
    ]);
  });

  it('validates additional properties against a schema, and patternProperties', () => {
    const schema = {
      type: 'object',
      patternProperties: { '^x-': { type: 'string' } },
      additionalProperties: { type: 'number' },
    };
    expect(validateJsonSchema(schema, { 'x-id': 'a', count: 1 })).toEqual([]);
    expect(validateJsonSchema(schema, { 'x-id': 1, count: 'a' })).toEqual([
      { path: '$["x-id"]', message: 'expected string, received integer' },
      { path: '$.count', message: 'expected number, received string' },
    ]);
  });

  it('resolves local $ref, recursion included', () => {
    const schema = {
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['name'],
        },
      },
    };
    expect(validateJsonSchema(schema, { name: 'a', children: [{ name: 'b', children: [] }] })).toEqual([]);
    expect(validateJsonSchema(schema, { name: 'a', children: [{ children: [] }] })).toEqual([
      { path: '$.children[0].name', message: 'required property is missing' },
    ]);
    expect(validateJsonSchema({ $ref: '#/definitions/missing' }, 1)).toEqual([
      { path: '$', message: 'schema reference #/definitions/missing cannot be resolved' },
    ]);
  });

  it('stops a self-referencing schema instead of recursing forever', () => {
    const issues = validateJsonSchema({ $ref: '#' }, 1);
    expect(issues).toEqual([{ path: '$', message: 'schema nesting deeper than 64 levels' }]);
  });

  it('refuses to run huge or invalid patterns, and patterns over huge strings', () => {
    expect(validateJsonSchema({ pattern: `(${'a'.repeat(1_001)})` }, 'a')[0]?.message).toBe(
      "cannot be checked: the schema's pattern is longer than 1000 characters",
    );
    expect(validateJsonSchema({ pattern: '([a-z' }, 'a')[0]?.message).toBe(
      "cannot be checked: the schema's pattern is not a valid regular expression",
    );
    expect(validateJsonSchema({ pattern: '^a+$' }, 'a'.repeat(100_001))[0]?.message).toContain(
      'is too long to be checked against pattern',
    );
  });

  it('caps the number of issues', () => {
    const value = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`key${index}`, index]));
    expect(validateJsonSchema({ type: 'object', additionalProperties: false }, value)).toHaveLength(20);
    expect(
      validateJsonSchema({ type: 'object', additionalProperties: false }, value, { maxIssues: 3 }),
    ).toHaveLength(3);
  });
});

describe('formatJsonPath', () => {
  it('writes identifiers with dots, indexes and other keys in brackets', () => {
    expect(formatJsonPath([])).toBe('$');
    expect(formatJsonPath(['stops', 2, 'name'])).toBe('$.stops[2].name');
    expect(formatJsonPath(['first name', '$ok', '9'])).toBe('$["first name"].$ok["9"]');
  });
});
