// Option checking of anthropic(): no option is ignored silently, and the message says what to fix.

import { KeelError } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { anthropic } from './anthropic.js';

function thrownBy(make: () => unknown): KeelError {
  try {
    make();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw new Error(`expected a KeelError, got ${String(error)}`);
  }
  throw new Error('expected a throw');
}

describe('anthropic() options', () => {
  it('null or non-object options are config.invalid, not a TypeError', () => {
    for (const options of [null, 'sk-key', [], 42]) {
      const error = thrownBy(() => anthropic('m', options as never));
      expect(error.code).toBe('config.invalid');
      expect(error.message).toMatch(/^anthropic\(\): options must be an object/);
    }
  });

  it("the Anthropic SDK's baseURL gets a suggestion of baseUrl", () => {
    const error = thrownBy(() => anthropic('m', { apiKey: 'k', baseURL: 'http://127.0.0.1:1' } as never));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(/option baseURL \(known: .*\); did you mean baseUrl\?/);
    expect(error.data).toMatchObject({ option: 'baseURL' });
  });

  it('an unknown option is named with the known ones, before the missing key', () => {
    expect(thrownBy(() => anthropic('m', { maxTokens: 10 } as never)).message).toBe(
      'Unknown anthropic() option maxTokens (known: apiKey, env, baseUrl, headers, maxOutputTokens, contextWindowTokens, provider, version, fetch, maxResponseBytes, thinking, maxPauseContinuations, promptCaching)',
    );
    expect(thrownBy(() => anthropic('m', { apikey: 'k' } as never)).message).toMatch(
      /option apikey \(known: .*\); did you mean apiKey\?/,
    );
    expect(thrownBy(() => anthropic('m', { apiKey: 'k', env: null as never })).message).toMatch(
      /env must be an object/,
    );
  });

  it('accepts every documented option', () => {
    const model = anthropic('m', {
      apiKey: 'k',
      env: {},
      baseUrl: 'http://127.0.0.1:1',
      headers: { 'anthropic-beta': 'x' },
      maxOutputTokens: 4096,
      contextWindowTokens: 8,
      provider: 'proxy',
      version: '2023-06-01',
      fetch: globalThis.fetch,
      maxResponseBytes: 1_000_000,
      thinking: { budgetTokens: 2048 },
      maxPauseContinuations: 0,
    });
    expect([model.provider, model.contextWindowTokens]).toEqual(['proxy', 8]);
  });

  it('refuses a maxResponseBytes that is not a positive whole number', () => {
    expect(thrownBy(() => anthropic('c', { apiKey: 'k', maxResponseBytes: 0 }))).toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(/maxResponseBytes/),
    });
  });
});
