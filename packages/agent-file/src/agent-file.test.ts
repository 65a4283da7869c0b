import { KeelError } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { parseAgentFile } from './agent-file.js';

const TOOLS = ['get_weather', 'calculator'];

function errorOf(text: string, allowedKeyHosts: string[] = []): KeelError {
  try {
    parseAgentFile(text, 'agent.yaml', TOOLS, { allowedKeyHosts });
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
        'modelTimeoutMs: 60000',
        'streamFirstByteTimeoutMs: 20000',
        'streamIdleTimeoutMs: 5000',
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
    expect(file.timeouts).toEqual({
      modelTimeoutMs: 60000,
      streamFirstByteTimeoutMs: 20000,
      streamIdleTimeoutMs: 5000,
    });
  });

  it.each([
    ['a missing name', 'tools: [get_weather]', /agent\.yaml:1:1: name is required/],
    [
      'a bad limit',
      'name: a\nlimits:\n  maxTurns: -2',
      /agent\.yaml:3:13: limits\.maxTurns must be a positive integer of at most \d+ \(got -2\)/,
    ],
    [
      'a string limit',
      'name: a\nlimits: { timeoutMs: soon }',
      /agent\.yaml:2:22: limits\.timeoutMs must be a positive integer/,
    ],
    [
      'a stream timeout that is not milliseconds',
      'name: a\nstreamIdleTimeoutMs: 0',
      /agent\.yaml:2:22: streamIdleTimeoutMs must be a positive integer of at most 2147483647 \(got 0\)/,
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
      /agent\.yaml:2:46: model\.baseUrl must be an http or https URL \(got not a url\)/,
    ],
    [
      'an ftp base URL',
      'name: a\nmodel: { provider: openai, name: m, baseUrl: "ftp://example.com/v1" }',
      /model\.baseUrl must be an http or https URL/,
    ],
    [
      'a URL-like model name taken for a base URL',
      'name: a\nmodel: { provider: openai, name: m, baseUrl: "anthropic:claude" }',
      /model\.baseUrl must be an http or https URL/,
    ],
    [
      'a base URL on the simulated provider',
      'name: a\nmodel: { provider: simulated, name: m, baseUrl: "http://127.0.0.1:9" }',
      /agent\.yaml:2:49: model\.baseUrl applies only to the openai and anthropic providers/,
    ],
    [
      'a run timeout longer than a timer can wait',
      'name: a\nlimits: { timeoutMs: 2147483648 }',
      /agent\.yaml:2:22: limits\.timeoutMs must be a positive integer of at most 2147483647 \(got 2147483648\)/,
    ],
    [
      'a fault schedule that does not parse',
      'name: a\nmodel: { name: m, faults: "meteor=1" }',
      /agent\.yaml:2:27: model\.faults is not a fault schedule: .*"meteor" is neither a fault kind/,
    ],
    [
      "a preset in one model's faults",
      'name: a\nfallbacks: [{ name: m, faults: demo }]',
      /agent\.yaml:2:32: fallbacks\[0\]\.faults applies to this model only/,
    ],
    [
      'a tool listed twice',
      'name: a\ntools: [get_weather, calculator, get_weather]',
      /agent\.yaml:2:34: tools\[2\] names get_weather a second time/,
    ],
    ['a blank model name', 'name: a\nmodel: "openai: "', /agent\.yaml:2:8: model must name a model/],
    ['broken YAML', 'name: a\nlimits: { maxTurns: 3', /agent\.yaml:\d+:\d+: invalid YAML/],
    ['a list at the top', '- a\n- b', /the file must be a mapping/],
  ])('rejects %s with file, line and field', (_label, text, pattern) => {
    const error = errorOf(text);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(pattern);
  });

  it('says where a refusal is in its data', () => {
    expect(errorOf('name: a\nlimits:\n  maxTurns: 0').data).toEqual({
      file: 'agent.yaml',
      line: 3,
      column: 13,
      field: 'limits.maxTurns',
    });
  });
});

describe('parseAgentFile: every mistake at once', () => {
  it('reports all of them, each with file:line:column and field, and the name meant for a misspelt one', () => {
    const error = errorOf(
      [
        'name: a',
        'modle: simulated:sim-primary',
        'model: { provider: simulated, name: m, fautls: "rate_limit=1" }',
        'tools: [get_wether, calculator, rm_rf]',
        'limits: { maxTurns: 0, maxTurn: 3 }',
        'retry: { maxAttempts: lots }',
      ].join('\n'),
    );
    expect(error.code).toBe('config.invalid');
    expect(error.message.split('\n')).toEqual([
      'agent.yaml:2:1: modle is not a known field (did you mean model? known: name, instructions, model, fallbacks, tools, toolChoice, handoffs, limits, retry, budgets, pace, modelTimeoutMs, streamFirstByteTimeoutMs, streamIdleTimeoutMs)',
      'agent.yaml:3:40: model.fautls is not a known field (did you mean model.faults? known: provider, name, baseUrl, apiKeyEnv, contextWindowTokens, faults, api)',
      expect.stringMatching(
        /^agent\.yaml:4:9: tools\[0\] names an unknown tool "get_wether" \(did you mean get_weather\? built-in tools: /,
      ),
      expect.stringMatching(/^agent\.yaml:4:33: tools\[2\] names an unknown tool "rm_rf" \(built-in tools: /),
      'agent.yaml:5:24: limits.maxTurn is not a known field (did you mean limits.maxTurns? known: maxTurns, timeoutMs, maxTokens, maxParallelToolCalls)',
      expect.stringMatching(/^agent\.yaml:5:21: limits\.maxTurns must be a positive integer/),
      expect.stringMatching(/^agent\.yaml:6:23: retry\.maxAttempts must be a positive integer/),
    ]);
    expect(error.data).toMatchObject({ file: 'agent.yaml', line: 2, column: 1, field: 'modle' });
    expect((error.data.mistakes as Array<{ field: string }>).map((mistake) => mistake.field)).toEqual([
      'modle',
      'model.fautls',
      'tools[0]',
      'tools[2]',
      'limits.maxTurn',
      'limits.maxTurns',
      'retry.maxAttempts',
    ]);
  });
});

describe('parseAgentFile: which key goes to which host', () => {
  it.each([
    [
      'a variable that is not an API key',
      'model: { provider: openai, name: m, apiKeyEnv: AWS_SECRET_ACCESS_KEY }',
      /agent\.yaml:2:48: model\.apiKeyEnv must name an API key variable, upper case and ending in _API_KEY or _API_TOKEN \(got AWS_SECRET_ACCESS_KEY\)/,
    ],
    [
      'an arbitrary variable sent to an arbitrary host',
      'model: { provider: openai, name: m, baseUrl: "http://attacker.example/v1", apiKeyEnv: AWS_SECRET_ACCESS_KEY }',
      /model\.apiKeyEnv must name an API key variable/,
    ],
    [
      "an API key sent to a host that is not the provider's",
      'model: { provider: openai, name: m, baseUrl: "http://attacker.example/v1", apiKeyEnv: OPENAI_API_KEY }',
      /agent\.yaml:2:46: model\.baseUrl would receive the API key in OPENAI_API_KEY, but attacker\.example is not openai's own host \(https:\/\/api\.openai\.com\)/,
    ],
    [
      'the default Anthropic key sent elsewhere',
      'fallbacks: [{ provider: anthropic, name: m, baseUrl: "https://proxy.example:8443" }]',
      /fallbacks\[0\]\.baseUrl would receive the API key in ANTHROPIC_API_KEY \(the default, ANTHROPIC_API_KEY\), but proxy\.example:8443 is not anthropic's own host/,
    ],
    [
      "the provider's own host over plain http",
      'model: { provider: anthropic, name: m, baseUrl: "http://api.anthropic.com" }',
      /model\.baseUrl would receive the API key in ANTHROPIC_API_KEY \(the default, ANTHROPIC_API_KEY\), but http:\/\/api\.anthropic\.com is not anthropic's own host \(https:\/\/api\.anthropic\.com\)/,
    ],
    [
      'a host hidden behind a user name',
      'model: { provider: anthropic, name: m, baseUrl: "https://api.anthropic.com@attacker.example" }',
      /model\.baseUrl would receive the API key in ANTHROPIC_API_KEY .*but attacker\.example is not anthropic's own host/,
    ],
    [
      'a lower-case variable',
      'model: { provider: anthropic, name: m, apiKeyEnv: my_api_key }',
      /model\.apiKeyEnv must name an API key variable/,
    ],
    [
      'a key variable on the simulated provider',
      'model: { provider: simulated, name: m, apiKeyEnv: OPENAI_API_KEY }',
      /model\.apiKeyEnv applies only to the openai and anthropic providers/,
    ],
  ])('refuses %s', (_label, model, pattern) => {
    const error = errorOf(`name: a\n${model}`);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(pattern);
  });

  it('says how to allow a host', () => {
    const error = errorOf(
      'name: a\nmodel: { provider: openai, name: m, baseUrl: "http://127.0.0.1:4000/v1", apiKeyEnv: LITELLM_API_KEY }',
    );
    expect(error.guidance).toBe(
      'If you trust 127.0.0.1:4000 with that key, run with --allow-key-host 127.0.0.1:4000',
    );
  });

  it.each([
    ['its name, any port', 'http://llm.internal:4000/v1', ['llm.internal'], true],
    ['its name and port', 'http://llm.internal:4000/v1', ['llm.internal:4000'], true],
    ['another port', 'http://llm.internal:4000/v1', ['llm.internal:4001'], false],
    ['the implicit https port', 'https://llm.internal/v1', ['llm.internal:443'], true],
    ['another host', 'http://llm.internal:4000/v1', ['llm.internal.attacker.example'], false],
    ['a suffix of the host', 'http://evil-llm.internal/v1', ['llm.internal'], false],
  ])('allows a key host named by %s', (_label, baseUrl, allowed, accepted) => {
    const text = `name: a\nmodel: { provider: openai, name: m, baseUrl: "${baseUrl}", apiKeyEnv: LITELLM_API_KEY }`;
    if (accepted) {
      expect(parseAgentFile(text, 'agent.yaml', TOOLS, { allowedKeyHosts: allowed }).model).toMatchObject({
        apiKeyEnv: 'LITELLM_API_KEY',
      });
    } else {
      expect(errorOf(text, allowed).message).toMatch(/model\.baseUrl would receive the API key/);
    }
  });

  it.each([
    ["the provider's own host", 'model: { provider: openai, name: m, apiKeyEnv: TEAM_OPENAI_API_KEY }'],
    [
      'its own host named in a base URL',
      'model: { provider: anthropic, name: m, baseUrl: "https://api.anthropic.com" }',
    ],
    [
      'a server elsewhere with no key variable (it gets no key)',
      'model: { provider: openai, name: m, baseUrl: "http://127.0.0.1:11434/v1" }',
    ],
    ['a token variable', 'model: { provider: openai, name: m, apiKeyEnv: GATEWAY_API_TOKEN }'],
  ])('accepts a key sent to %s', (_label, model) => {
    expect(parseAgentFile(`name: a\n${model}`, 'agent.yaml', TOOLS).name).toBe('a');
  });
});

describe('budgets', () => {
  it('reads token and cost budgets, located mistakes refused', () => {
    const file = parseAgentFile(
      [
        'name: a',
        'budgets:',
        '  defaultOutputTokens: 512',
        '  cheaperFallbacks: false',
        '  limits:',
        '    - { name: daily, scope: tenant, maxCostUsd: 5, period: day }',
        '',
      ].join('\n'),
      'agent.yaml',
      TOOLS,
    );
    expect(file.budgets).toEqual({
      defaultOutputTokens: 512,
      cheaperFallbacks: false,
      limits: [{ name: 'daily', scope: 'tenant', maxCostUsd: 5, period: 'day' }],
    });
    expect(() =>
      parseAgentFile('name: a\nbudgets:\n  limits:\n    - { name: x, scop: run }\n', 'agent.yaml', TOOLS),
    ).toThrow(/agent\.yaml:4:18: budgets\.limits\[0\]\.scop is not a known field/);
    expect(() => parseAgentFile('name: a\nbudgets: { limits: [] }\n', 'agent.yaml', TOOLS)).toThrow(
      /budgets\.limits must be a non-empty list of budgets/,
    );
  });
});

describe('pace', () => {
  it('reads pace: true, and refuses what is not a boolean', () => {
    expect(parseAgentFile('name: a\npace: true\n', 'agent.yaml', TOOLS).pace).toBe(true);
    expect(parseAgentFile('name: a\npace: false\n', 'agent.yaml', TOOLS).pace).toBeUndefined();
    expect(() => parseAgentFile('name: a\npace: shared\n', 'agent.yaml', TOOLS)).toThrow(
      /agent\.yaml:2:7: pace/,
    );
  });
});
