import { agent, type Tool, tool } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { LabelBounds, OVERFLOW_LABEL } from './label-bounds.js';
import { KEEL_METRICS } from './metric-catalogue.js';
import { RunMetrics } from './run-metrics.js';

// Keys of shapes no credential pattern knows: only their values can find them.
const GROQ_KEY = 'gsk_8fQzK2mXw9LpR4vT7yN1bC6dH3jE5aS0uI8oP2qW4eR6tY9uXz';
const HEX_KEY = '9f86d081884c7d659a2feaa0c55ad015';

describe('LabelBounds', () => {
  it('keeps the requested model and the first few others per requested model, then _OTHER', () => {
    const bounds = new LabelBounds({ maxResponseModels: 2 });
    const labels = ['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-mini', 'gpt-4o-x', 'gpt-4o', 'gpt-4o-mini'].map(
      (model) => bounds.responseModel('openai/gpt-4o', model),
    );
    expect(labels).toEqual([
      'gpt-4o',
      'gpt-4o-2024-08-06',
      'gpt-4o-mini',
      OVERFLOW_LABEL,
      'gpt-4o',
      'gpt-4o-mini',
    ]);
    // Another requested model has bounds of its own.
    expect(bounds.responseModel('openai/gpt-4.1', 'gpt-4.1-2025')).toBe('gpt-4.1-2025');
  });

  it('never puts a known secret in a label, whatever its shape', () => {
    const bounds = new LabelBounds({ secrets: [GROQ_KEY, HEX_KEY, undefined] });
    expect(bounds.responseModel('groq/llama-3', GROQ_KEY)).toBe('[redacted]');
    expect(bounds.responseModel('groq/llama-3', `llama-${HEX_KEY}`)).toBe('llama-[redacted]');
    expect(bounds.toolName('ops', `lookup_${HEX_KEY}`)).toBe('lookup_[redacted]');
    // A long secret is removed before the value is cut to 128 characters, so no part of it is left.
    const long = `${'m'.repeat(100)}${GROQ_KEY}`;
    expect(bounds.responseModel('groq/other', long)).toBe(`${'m'.repeat(100)}[redacted]`);
  });

  it('caps tool names per agent, and names calls of unknown tools _OTHER', () => {
    const bounds = new LabelBounds({ maxToolNames: 2 });
    expect(['a', 'b', 'c', 'a'].map((name) => bounds.toolName('ops', name))).toEqual([
      'a',
      'b',
      OVERFLOW_LABEL,
      'a',
    ]);
    expect(bounds.toolName('billing', 'c')).toBe('c');
    expect(bounds.toolName('billing', 'made_up', 'tool.not_found')).toBe(OVERFLOW_LABEL);
  });

  it('refuses bad options with config.invalid', () => {
    expect(() => new LabelBounds({ maxToolNames: -1 })).toThrow(/maxToolNames must be a whole number/);
    expect(() => new LabelBounds({ secrets: 'sk-x' as never })).toThrow(
      /secrets must be an array of strings/,
    );
  });
});

describe('RunMetrics with tools a server renames', () => {
  it('counts at most maxToolNames tool names per agent, the rest as _OTHER', async () => {
    // A toolset whose server named its tool differently on each listing: 12 names, each called once.
    const tools: Tool[] = Array.from({ length: 12 }, (_, index) =>
      tool({
        name: `search_v${index}`,
        description: 'Searches',
        input: { type: 'object' },
        idempotent: true,
        execute: () => 'found',
      }),
    );
    const model = scriptedModel(
      [
        {
          toolCalls: [
            ...tools.map((entry, index) => ({ id: `call_${index}`, name: entry.name, arguments: {} })),
            { id: 'call_unknown', name: 'search_v99', arguments: {} },
          ],
        },
        { content: 'done' },
      ],
      { provider: 'mcp', model: 'm' },
    );
    const assistant = agent({ name: 'ops', model, tools });
    const metrics = new RunMetrics(
      { histogram: () => () => undefined },
      new LabelBounds({ maxToolNames: 5 }),
    );
    metrics.observe(assistant);
    expect((await assistant.run('search')).status).toBe('completed');

    const calls = [...metrics.counters()].filter((reading) => reading.metric === KEEL_METRICS.toolCalls);
    const names = new Set(calls.map((reading) => reading.attributes['gen_ai.tool.name']));
    expect([...names].sort()).toEqual([
      OVERFLOW_LABEL,
      'search_v0',
      'search_v1',
      'search_v2',
      'search_v3',
      'search_v4',
    ]);
    const total = calls.reduce((sum, reading) => sum + reading.value, 0);
    expect(total).toBeGreaterThanOrEqual(12);
  });
});
