// Option checking of openai() and openaiCompatible(): no option is ignored silently, and the message says what to fix.

import { KeelError } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { openai, openaiCompatible } from './openai.js';

function thrownBy(make: () => unknown): KeelError {
  try {
    make();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw new Error(`expected a KeelError, got ${String(error)}`);
  }
  throw new Error('expected a throw');
}

describe('openai() and openaiCompatible() options', () => {
  it('null or non-object options are config.invalid, not a TypeError', () => {
    for (const options of [null, 'sk-key', [], 42]) {
      const error = thrownBy(() => openai('m', options as never));
      expect(error.code).toBe('config.invalid');
      expect(error.message).toMatch(/^openai\(\): options must be an object/);
      const compatible = thrownBy(() => openaiCompatible(options as never));
      expect(compatible.code).toBe('config.invalid');
      expect(compatible.message).toMatch(/^openaiCompatible\(\): options must be an object/);
    }
  });

  it("the OpenAI SDK's baseURL gets a suggestion of baseUrl", () => {
    const error = thrownBy(() => openai('m', { apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1' } as never));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(/option baseURL \(known: .*\); did you mean baseUrl\?/);
    expect(error.data).toMatchObject({ option: 'baseURL' });
    const compatible = thrownBy(() =>
      openaiCompatible({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' } as never),
    );
    expect(compatible.message).toMatch(/option baseURL \(known: .*\); did you mean baseUrl\?/);
  });

  it('an unknown option is named with the known ones, before any other complaint', () => {
    // No API key either: the unknown option is the first thing to fix, since it may be the key under a wrong name.
    const error = thrownBy(() => openai('m', { api_key: 'k' } as never));
    expect(error.message).toBe(
      'Unknown openai() option api_key (known: apiKey, headers, contextWindowTokens, fetch, maxTokensField, strictJsonSchema, maxResponseBytes, reasoningEffort, env, baseUrl, organization, project); did you mean apiKey?',
    );
    const unrelated = thrownBy(() =>
      openaiCompatible({ baseUrl: 'http://h', model: 'm', retries: 3 } as never),
    );
    expect(unrelated.message).toBe(
      'Unknown openaiCompatible() option retries (known: apiKey, headers, contextWindowTokens, fetch, maxTokensField, strictJsonSchema, maxResponseBytes, reasoningEffort, baseUrl, model, provider)',
    );
  });

  it('rejects env, organization and project of the wrong type', () => {
    expect(thrownBy(() => openai('m', { apiKey: 'k', env: null as never })).message).toMatch(
      /env must be an object/,
    );
    expect(thrownBy(() => openai('m', { apiKey: 'k', organization: 1 as never })).message).toMatch(
      /organization must be a string/,
    );
    expect(thrownBy(() => openai('m', { apiKey: 'k', project: {} as never })).message).toMatch(
      /project must be a string/,
    );
  });

  it('accepts every documented option', () => {
    const model = openai('m', {
      apiKey: 'k',
      headers: { 'x-a': 'b' },
      contextWindowTokens: 8,
      fetch: globalThis.fetch,
      maxTokensField: 'max_tokens',
      strictJsonSchema: true,
      maxResponseBytes: 1_000_000,
      reasoningEffort: 'low',
      env: {},
      baseUrl: 'http://127.0.0.1:1/v1',
      organization: 'org',
      project: 'proj',
    });
    expect(model.contextWindowTokens).toBe(8);
    const compatible = openaiCompatible({ baseUrl: 'http://h', model: 'm', provider: 'ollama', apiKey: 'k' });
    expect(compatible.provider).toBe('ollama');
  });
});
