import { describe, expect, it } from 'vitest';
import { argumentsFromSchema, matchesType, valueFromSchema } from './schema-values.js';
import { keywords, properNouns } from './words.js';

describe('words', () => {
  it('finds proper nouns, inner ones first, sentence starters and stopwords last or never', () => {
    expect(properNouns("What's the weather in Paris?")).toEqual(['Paris']);
    expect(properNouns('Flights from New York to San Francisco. London is next.')).toEqual([
      'New York',
      'San Francisco',
      'Flights',
      'London',
    ]);
    expect(properNouns('please help')).toEqual([]);
  });

  it('keeps meaningful stems only', () => {
    expect([...keywords('Show me the cities with the best forecasts')]).toEqual(['city', 'best', 'forecast']);
  });
});

describe('valueFromSchema', () => {
  it('fills required properties only for tool arguments, by property name', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        query: { type: 'string' },
        date: { type: 'string', format: 'date' },
        email: { type: 'string' },
        url: { type: 'string' },
        path: { type: 'string' },
        count: { type: 'integer', maximum: 3 },
        verbose: { type: 'boolean' },
        note: { type: 'string' },
      },
      required: ['city', 'query', 'date', 'email', 'url', 'path', 'count'],
    };
    const task =
      'Email ann@example.com the report in docs/report.md about Berlin on 2025-03-04, see https://example.org/a, top 7';
    expect(argumentsFromSchema(schema, task)).toEqual({
      city: 'Berlin',
      query: task,
      date: '2025-03-04',
      email: 'ann@example.com',
      url: 'https://example.org/a',
      path: 'docs/report.md',
      count: 3,
    });
  });

  it('uses enums the task mentions, consts, defaults, refs and unions', () => {
    const schema = {
      type: 'object',
      $defs: { unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      properties: {
        unit: { $ref: '#/$defs/unit' },
        version: { const: 2 },
        mode: { type: 'string', default: 'fast' },
        tag: { anyOf: [{ type: 'null' }, { type: 'string' }] },
        nullable: { type: ['null', 'number'] },
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        },
      },
    };
    expect(
      valueFromSchema(schema, { task: 'In fahrenheit for Rome, 12 items', allProperties: true }),
    ).toEqual({
      unit: 'fahrenheit',
      version: 2,
      mode: 'fast',
      tag: 'Rome',
      nullable: 12,
      items: [{ id: 12 }],
    });
  });

  it('moves to the next candidate with a higher variant', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const task = 'Compare Paris and Lyon';
    expect(argumentsFromSchema(schema, task, 0)).toEqual({ city: 'Paris' });
    expect(argumentsFromSchema(schema, task, 1)).toEqual({ city: 'Lyon' });
  });

  it('stops at self-referencing schemas', () => {
    const schema = { type: 'object', properties: { child: { $ref: '#' } }, required: ['child'] };
    expect(JSON.stringify(valueFromSchema(schema, { task: 'x' }))).toContain('null');
  });

  it('checks a value against a schema type', () => {
    expect(matchesType({ type: 'integer' }, 3)).toBe(true);
    expect(matchesType({ type: 'integer' }, 3.5)).toBe(false);
    expect(matchesType({ type: 'string', enum: ['a'] }, 'b')).toBe(false);
    expect(matchesType({ type: 'string' }, undefined)).toBe(false);
  });
});
