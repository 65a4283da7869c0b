import { describe, expect, it } from 'vitest';
import { parseAgentFile } from './agent-file.js';

const parse = (text: string) => parseAgentFile(text, 'agent.yaml', []);

describe('agent file: a model on the Responses API', () => {
  it('reads api: responses (and chat) for the openai provider', () => {
    expect(parse('name: a\nmodel: { provider: openai, name: gpt-5-mini, api: responses }').model).toEqual({
      provider: 'openai',
      name: 'gpt-5-mini',
      api: 'responses',
    });
    expect(parse('name: a\nmodel: { provider: openai, name: gpt-4.1, api: chat }').model?.api).toBe('chat');
  });

  it('reads api: responses for the simulated provider (offline, the same wire)', () => {
    expect(parse('name: a\nmodel: { provider: simulated, name: sim-primary, api: responses }').model).toEqual(
      {
        provider: 'simulated',
        name: 'sim-primary',
        api: 'responses',
      },
    );
  });

  it.each([
    [
      'another provider',
      'model: { provider: anthropic, name: c, api: responses }',
      /model\.api applies only to the openai and simulated providers/,
    ],
    [
      'another word',
      'model: { provider: openai, name: m, api: completions }',
      /model\.api must be chat or responses \(got completions\)/,
    ],
  ])('refuses %s', (_name, line, message) => {
    expect(() => parse(`name: a\n${line}`)).toThrow(message);
  });
});
