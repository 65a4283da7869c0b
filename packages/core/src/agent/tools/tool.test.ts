import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { KeelError } from '../../errors/keel-error.js';
import { optionErrorData } from '../../options/option-error.js';
import type { Tool, ToolContext } from '../../spec/tool.js';
import { indexTools, tool, toToolDefinition } from './tool.js';

const context: ToolContext = {
  signal: new AbortController().signal,
  idempotencyKey: 'run-1:1:0',
  runId: 'run-1',
  step: 1,
  callIndex: 0,
  attempt: 1,
};

function configError(action: () => unknown): KeelError {
  try {
    action();
  } catch (error) {
    if (KeelError.isInstance(error)) {
      expect(error.code).toBe('config.invalid');
      return error;
    }
    throw error;
  }
  throw new Error('expected a config.invalid KeelError');
}

describe('tool() with a zod 4 schema', () => {
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string().min(2), days: z.number().int().default(1) }),
    idempotent: true,
    timeoutMs: 5_000,
    async execute({ city, days }) {
      return { city, days, temperatureC: 21 };
    },
  });

  it('derives the JSON Schema sent to the model through Standard JSON Schema', () => {
    expect(weather.inputSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', minLength: 2 }, days: { type: 'integer' } },
      required: ['city'],
    });
    expect(weather.inputSchema.$schema).toBeUndefined();
    expect(toToolDefinition(weather)).toEqual({
      name: 'get_weather',
      description: 'Current weather for a city',
      inputSchema: weather.inputSchema,
    });
  });

  it('validates with zod (defaults applied) and maps issues to JSON paths', async () => {
    expect(await weather.validate({ city: 'Paris' })).toEqual({
      success: true,
      value: { city: 'Paris', days: 1 },
    });
    const invalid = await weather.validate({ city: 'P', days: 1.5 });
    expect(invalid.success).toBe(false);
    if (invalid.success) return;
    expect(invalid.issues.map((issue) => issue.path)).toEqual(['$.city', '$.days']);
    expect(invalid.issues[0]!.message).toMatch(/>=2 characters/);
  });

  it('keeps its options and runs execute', async () => {
    expect(weather).toMatchObject({ name: 'get_weather', idempotent: true, timeoutMs: 5_000 });
    expect(Object.isFrozen(weather)).toBe(true);
    expect(await weather.execute({ city: 'Paris', days: 2 }, context)).toEqual({
      city: 'Paris',
      days: 2,
      temperatureC: 21,
    });
  });

  it('infers the input and output types from the schema and execute', () => {
    expectTypeOf(weather).toEqualTypeOf<
      Tool<{ city: string; days: number }, { city: string; days: number; temperatureC: number }>
    >();
    expect(indexTools([weather]).get('get_weather')).toBe(weather);
  });

  it('fits a Tool[] whatever its input type, needsApproval function included', async () => {
    const guarded = tool({
      name: 'transfer',
      description: 'Move money',
      input: z.object({ amountCents: z.number() }),
      needsApproval: ({ amountCents }) => amountCents > 10_000,
      execute: () => 'ok',
    });
    const tools: Tool[] = [weather, guarded];
    const check = tools[1]!.needsApproval;
    expect(typeof check === 'function' && (await check({ amountCents: 20_000 }))).toBe(true);
  });

  it('supports async zod refinements', async () => {
    const checked = tool({
      name: 'checked',
      description: 'd',
      input: z.object({ code: z.string().refine(async (code) => code === 'ok', 'code must be ok') }),
      execute: () => null,
    });
    expect(await checked.validate({ code: 'no' })).toEqual({
      success: false,
      issues: [{ path: '$.code', message: 'code must be ok' }],
    });
  });

  it('asks for inputJsonSchema when zod cannot produce JSON Schema, and accepts it', () => {
    const input = z.object({ when: z.date() });
    const error = configError(() => tool({ name: 'schedule', description: 'd', input, execute: () => null }));
    expect(error.message).toContain('cannot be converted to JSON Schema');
    expect(error.message).toContain('inputJsonSchema');
    const schedule = tool({
      name: 'schedule',
      description: 'd',
      input,
      inputJsonSchema: { type: 'object', properties: { when: { type: 'string' } }, required: ['when'] },
      execute: () => null,
    });
    expect(schedule.inputSchema.properties).toEqual({ when: { type: 'string' } });
  });

  it('asks for inputJsonSchema when a Standard Schema has no JSON Schema converter', () => {
    const bare = {
      '~standard': { version: 1 as const, vendor: 'other', validate: (value: unknown) => ({ value }) },
    };
    const error = configError(() =>
      tool({ name: 'bare', description: 'd', input: bare, execute: () => null }),
    );
    expect(error.message).toContain('does not implement Standard JSON Schema');
  });
});

describe('tool() with a JSON Schema', () => {
  const search = tool<{ query: string }>({
    name: 'search',
    description: 'Search the docs',
    input: {
      type: 'object',
      properties: { query: { type: 'string', minLength: 1 } },
      required: ['query'],
      additionalProperties: false,
    },
    execute: ({ query }) => [query],
  });

  it('validates with the built-in validator', async () => {
    expect(await search.validate({ query: 'x' })).toEqual({ success: true, value: { query: 'x' } });
    expect(await search.validate({ query: '', other: 1 })).toEqual({
      success: false,
      issues: [
        { path: '$.query', message: 'must be at least 1 characters long (is 0)' },
        { path: '$.other', message: 'unexpected property "other" (not in the schema)' },
      ],
    });
  });

  it('defaults idempotent to false and leaves timeoutMs to the agent', () => {
    expect(search.idempotent).toBe(false);
    expect(search.timeoutMs).toBeUndefined();
    expect(search.needsApproval).toBeUndefined();
  });

  it('accepts a JSON Schema written as const', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    } as const;
    const constant = tool({ name: 'constant', description: 'd', input: schema, execute: () => null });
    expect(constant.inputSchema).toEqual(schema);
    expect((await constant.validate({})).success).toBe(false);
  });

  it('copies the schema, so later changes to the caller object do not leak in', () => {
    const input = { type: 'object', properties: {} };
    const copy = tool({ name: 'copy', description: 'd', input, execute: () => null });
    input.properties = { changed: { type: 'string' } };
    expect(copy.inputSchema.properties).toEqual({});
  });
});

describe('tool() option checks', () => {
  const base = { description: 'd', input: { type: 'object' }, execute: () => null };

  it.each([
    ['an empty name', { ...base, name: '' }, 'tool name "" is invalid'],
    ['a name with spaces', { ...base, name: 'get weather' }, 'is invalid'],
    ['a 65-character name', { ...base, name: 'a'.repeat(65) }, 'is invalid'],
    ['an empty description', { ...base, name: 't', description: '  ' }, 'non-empty description'],
    ['no execute', { ...base, name: 't', execute: undefined }, 'needs an execute function'],
    ['a non-boolean idempotent', { ...base, name: 't', idempotent: 'yes' }, 'idempotent must be a boolean'],
    ['a zero timeout', { ...base, name: 't', timeoutMs: 0 }, 'timeoutMs must be a positive number'],
    ['an infinite timeout', { ...base, name: 't', timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs'],
    ['a string needsApproval', { ...base, name: 't', needsApproval: 'always' }, 'needsApproval must be'],
    ['no input', { ...base, name: 't', input: undefined }, 'needs an input schema'],
    [
      'a non-object input schema',
      { ...base, name: 't', input: { type: 'string' } },
      'must be an object schema',
    ],
    ['an array input', { ...base, name: 't', input: [] }, 'must be a Standard Schema'],
    [
      'a function in the schema',
      { ...base, name: 't', input: { type: 'object', default: () => 1 } },
      'holds a function at $.default',
    ],
    [
      'a bad pattern',
      { ...base, name: 't', input: { type: 'object', properties: { a: { pattern: '(' } } } },
      'not a valid regular expression',
    ],
  ])('rejects %s', (_label, options, message) => {
    const error = configError(() => tool(options as never));
    expect(error.message).toContain(message);
  });

  it('refuses an unknown option, suggesting the closest, with the kit data an adapter reads', () => {
    const error = configError(() => tool({ ...base, name: 't', idempotant: true } as never));
    expect(error.message).toContain('Unknown tool "t" option idempotant');
    expect(error.message).toContain('did you mean idempotent?');
    expect(optionErrorData(error)).toEqual({ where: 'tool "t"', option: 'idempotant', path: ['idempotant'] });
  });

  it('names the option at fault in the data of every refusal', () => {
    const error = configError(() => tool({ ...base, name: 't', timeoutMs: -1 }));
    expect(optionErrorData(error)).toEqual({ where: 'tool "t"', option: 'timeoutMs', path: ['timeoutMs'] });
  });

  it('derives a tool from a built one spread into it, the fields it built made again from input', async () => {
    const input = { type: 'object', properties: { q: { type: 'string' } } } as const;
    const search = tool({ ...base, name: 'search', input });
    const regional = tool({ ...search, name: 'search_eu', input });
    expect(regional.name).toBe('search_eu');
    expect(regional.inputSchema).toEqual(search.inputSchema);
    expect(await regional.validate({ q: 1 })).toMatchObject({ success: false });
  });

  it('accepts names with digits, "_" and "-" up to 64 characters', () => {
    expect(tool({ ...base, name: `A-${'b_9'.repeat(20)}x` }).name).toHaveLength(63);
  });
});

describe('indexTools', () => {
  it('rejects duplicate names and non-tools', () => {
    const one = tool({ name: 'one', description: 'd', input: { type: 'object' }, execute: () => 1 });
    expect(configError(() => indexTools([one, one])).message).toContain('two tools are named "one"');
    expect(configError(() => indexTools([one, {} as Tool])).message).toContain('tools[1] is not a tool');
  });
});
