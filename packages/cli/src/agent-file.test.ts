import { KeelError } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { parseAgentFile } from './agent-file.js';

const TOOLS = ['get_weather', 'calculator'];

function errorOf(text: string): KeelError {
  try {
    parseAgentFile(text, 'agent.yaml', TOOLS);
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the file to be rejected');
}

describe('parseAgentFile', () => {
  it('reads a complete file', () => {
    const file = parseAgentFile(
      [
        'name: helper',
        'instructions: Be brief.',
        'model: { provider: simulated, name: primary, faults: "rate_limit=1" }',
        'fallbacks: [ "simulated:backup", { provider: openai, name: gpt-4.1-mini, baseUrl: "http://127.0.0.1:9/v1" } ]',
        'tools: [get_weather]',
        'limits: { maxTurns: 4, timeoutMs: 30000 }',
        'retry: { maxAttempts: 5 }',
      ].join('\n'),
      'agent.yaml',
      TOOLS,
    );
    expect(file.model).toEqual({ provider: 'simulated', name: 'primary', faults: 'rate_limit=1' });
    expect(file.fallbacks).toEqual([
      { provider: 'simulated', name: 'backup' },
      { provider: 'openai', name: 'gpt-4.1-mini', baseUrl: 'http://127.0.0.1:9/v1' },
    ]);
    expect(file.limits).toEqual({ maxTurns: 4, timeoutMs: 30000 });
    expect(file.retry.maxAttempts).toBe(5);
  });

  it.each([
    ['a missing name', 'tools: [get_weather]', /agent\.yaml:1:1: name is required/],
    [
      'a bad limit',
      'name: a\nlimits:\n  maxTurns: -2',
      /agent\.yaml:3:13: limits\.maxTurns must be a positive integer \(got -2\)/,
    ],
    [
      'a string limit',
      'name: a\nlimits: { timeoutMs: soon }',
      /agent\.yaml:2:22: limits\.timeoutMs must be a positive integer/,
    ],
    [
      'an unknown tool',
      'name: a\ntools: [get_weather, rm_rf]',
      /agent\.yaml:2:22: tools\[1\] names an unknown tool "rm_rf"/,
    ],
    ['an unknown field', 'name: a\nmodle: x', /agent\.yaml:2:1: modle is not a known field/],
    [
      'an unknown provider',
      'name: a\nmodel: "azure:gpt"',
      /agent\.yaml:2:8: model names an unknown provider "azure"/,
    ],
    [
      'faults on a real provider',
      'name: a\nmodel: { provider: openai, name: m, faults: x }',
      /model\.faults applies only to the simulated provider/,
    ],
    [
      'a bad base URL',
      'name: a\nmodel: { provider: openai, name: m, baseUrl: "not a url" }',
      /model\.baseUrl must be a URL/,
    ],
    ['broken YAML', 'name: a\nlimits: { maxTurns: 3', /agent\.yaml:\d+:\d+: invalid YAML/],
    ['a list at the top', '- a\n- b', /the file must be a mapping/],
  ])('rejects %s with file, line and field', (_label, text, pattern) => {
    const error = errorOf(text);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(pattern);
  });
});
