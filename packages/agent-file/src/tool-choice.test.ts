import { describe, expect, it } from 'vitest';
import { parseAgentFile } from './agent-file.js';

const TOOLS = ['get_weather', 'read_file'];

const parse = (text: string) => parseAgentFile(text, 'agent.yaml', TOOLS);

describe('agent file: toolChoice', () => {
  it('reads auto, none, required and a named tool', () => {
    expect(parse('name: a\ntools: [get_weather]\ntoolChoice: required').toolChoice).toBe('required');
    expect(parse('name: a\ntoolChoice: none').toolChoice).toBe('none');
    expect(parse('name: a\ntools: [get_weather]\ntoolChoice: { name: get_weather }').toolChoice).toEqual({
      name: 'get_weather',
    });
    expect(parse('name: a').toolChoice).toBeUndefined();
  });

  it.each([
    [
      'a tool the file does not list',
      'name: a\ntools: [get_weather]\ntoolChoice: { name: read_file }',
      /agent\.yaml:3:21: toolChoice\.name names the tool "read_file", which the file does not list \(it lists get_weather\)/,
    ],
    [
      'required without tools',
      'name: a\ntoolChoice: required',
      /agent\.yaml:2:13: toolChoice is required, but/,
    ],
    [
      'an unknown word',
      'name: a\ntoolChoice: always',
      /agent\.yaml:2:13: toolChoice must be auto, none, required/,
    ],
    [
      'another field',
      'name: a\ntools: [get_weather]\ntoolChoice: { tool: x }',
      /toolChoice\.tool is not a known/,
    ],
  ])('refuses %s with config.invalid', (_name, text, message) => {
    expect(() => parse(text)).toThrow(message);
  });
});
