import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { scriptedModel } from '../../testing/scripted-model.js';
import { agent } from '../agent.js';
import { tool } from '../tools/tool.js';

const lookup = tool({
  name: 'lookup',
  description: 'Looks a word up',
  input: { type: 'object', properties: { word: { type: 'string' } } },
  idempotent: true,
  execute: () => 'found',
});
const overloaded = () => new KeelError('provider.overloaded', 'overloaded', { provider: 'scripted' });

describe('prompt cache in usage and the report', () => {
  it('sums cached and written tokens, and reports the hit rate', async () => {
    const model = scriptedModel([
      {
        toolCalls: [{ name: 'lookup' }],
        usage: { inputTokens: 1_000, outputTokens: 5, cacheWriteInputTokens: 900 },
      },
      { content: 'done', usage: { inputTokens: 1_100, outputTokens: 5, cachedInputTokens: 900 } },
    ]);
    const result = await agent({ model, tools: [lookup] }).run('Define keel');
    expect(result.report.usage).toEqual({
      inputTokens: 2_100,
      outputTokens: 10,
      cachedInputTokens: 900,
      cacheWriteInputTokens: 900,
    });
    expect(result.report.promptCacheHitRate).toBeCloseTo(900 / 2_100, 10);
  });

  it('leaves the cache fields and the hit rate out when no provider reported them', async () => {
    const result = await agent({ model: scriptedModel([{ content: 'hi', usage: { inputTokens: 3 } }]) }).run(
      'Hi',
    );
    expect(result.report.usage).toEqual({ inputTokens: 3, outputTokens: 0 });
    expect(result.report).not.toHaveProperty('promptCacheHitRate');
  });

  it('says in the report that a fallback lost the prompt cache the run had been using', async () => {
    const primary = scriptedModel(
      [
        { toolCalls: [{ name: 'lookup' }], usage: { inputTokens: 1_000, cacheWriteInputTokens: 900 } },
        overloaded(),
      ],
      { model: 'primary' },
    );
    const backup = scriptedModel([{ content: 'done', usage: { inputTokens: 1_000 } }], { model: 'backup' });
    const result = await agent({
      model: primary,
      fallbacks: [backup],
      tools: [lookup],
      retry: { maxAttempts: 1 },
    }).run('Define keel');
    expect(result.status).toBe('completed');
    expect(result.report.fallbacks.used).toEqual([
      {
        step: 2,
        from: 'scripted/primary',
        to: 'scripted/backup',
        errorCode: 'provider.overloaded',
        promptCacheLost: true,
      },
    ]);
  });

  it('does not say so when the run had no cache to lose', async () => {
    const primary = scriptedModel([overloaded()], { model: 'primary' });
    const backup = scriptedModel([{ content: 'done' }], { model: 'backup' });
    const result = await agent({ model: primary, fallbacks: [backup], retry: { maxAttempts: 1 } }).run('Hi');
    expect(result.report.fallbacks.used[0]).not.toHaveProperty('promptCacheLost');
  });
});
