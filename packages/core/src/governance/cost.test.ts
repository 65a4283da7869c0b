import { describe, expect, it } from 'vitest';
import { agent } from '../agent/agent.js';
import { KeelError } from '../errors/keel-error.js';
import { constant } from '../policies/delays.js';
import type { RunEvent } from '../spec/run-events.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { costOfUsage, worstCaseCost } from './cost.js';
import { DEFAULT_PRICES, priceOf, priceTable } from './prices.js';

describe('the price table', () => {
  it('finds a model by provider/model, by name, and a dated snapshot by its longest prefix', () => {
    const table = priceTable({ 'openai/gpt-4.1': { inputUsdPerMillion: 9, outputUsdPerMillion: 9 } });
    expect(priceOf(table, 'openai', 'gpt-4.1')?.inputUsdPerMillion).toBe(9);
    expect(priceOf(table, 'azure', 'gpt-4.1')).toBe(DEFAULT_PRICES['gpt-4.1']);
    expect(priceOf(table, 'openai', 'gpt-4.1-mini-2025-04-14')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    expect(priceOf(table, 'anthropic', 'claude-sonnet-4-5-20250929')).toBe(
      DEFAULT_PRICES['claude-sonnet-4-5'],
    );
    expect(priceOf(table, 'simulated', 'anything')).toBe(DEFAULT_PRICES.simulated);
    expect(priceOf(table, 'acme', 'unknown-model')).toBeUndefined();
  });

  it('refuses a bad override, naming the field', () => {
    expect(() => priceTable({ x: { inputUsdPerMillion: -1, outputUsdPerMillion: 1 } })).toThrow(
      /prices\["x"\]\.inputUsdPerMillion must be US dollars per million tokens/,
    );
    expect(() =>
      priceTable({ x: { inputUsdPerMillion: 1, outputUsdPerMillion: 1, input: 2 } as never }),
    ).toThrow(/unknown field "input"/);
  });
});

describe('costOfUsage', () => {
  it('prices cached, cache-written and reasoning tokens apart', () => {
    const price = {
      inputUsdPerMillion: 3,
      outputUsdPerMillion: 15,
      cachedInputUsdPerMillion: 0.3,
      cacheWriteInputUsdPerMillion: 3.75,
      reasoningUsdPerMillion: 20,
    };
    const usd = costOfUsage(
      {
        inputTokens: 1_000_000,
        outputTokens: 1_000_000,
        cachedInputTokens: 500_000,
        cacheWriteInputTokens: 100_000,
        reasoningTokens: 250_000,
      },
      price,
    );
    // 400k uncached at 3, 500k cached at 0.3, 100k written at 3.75; 750k output at 15, 250k reasoning at 20.
    expect(usd).toBeCloseTo(1.2 + 0.15 + 0.375 + 11.25 + 5, 9);
    expect(worstCaseCost(1_000_000, 1_000_000, price)).toBeCloseTo(3.75 + 20, 9);
  });
});

describe('cost in runs', () => {
  it('shows each call cost in model-call-end and the run cost in the report, by model', async () => {
    const primary = scriptedModel(
      [
        new KeelError('provider.overloaded', 'busy'),
        { content: 'hi', usage: { inputTokens: 1_000, outputTokens: 500 } },
      ],
      { provider: 'openai', model: 'gpt-4.1-mini' },
    );
    const events: RunEvent[] = [];
    const assistant = agent({
      model: primary,
      retry: { delay: constant(0) },
      onEvent: (event) => events.push(event),
      prices: { 'gpt-4.1-mini': { inputUsdPerMillion: 1, outputUsdPerMillion: 2 } },
    });
    const result = await assistant.run('hello');
    expect(result.status).toBe('completed');
    const expected = (1_000 * 1 + 500 * 2) / 1_000_000;
    expect(result.report.cost?.totalUsd).toBeCloseTo(expected, 12);
    expect(result.report.cost?.byModel['openai/gpt-4.1-mini']).toBeCloseTo(expected, 12);
    const ends = events.filter((event) => event.type === 'model-call-end');
    expect(ends.map((event) => event.costUsd)).toEqual([undefined, expected]);
  });

  it('counts calls of a model without a price apart, at no cost', async () => {
    const result = await agent({ model: scriptedModel([{ content: 'x', usage: { inputTokens: 5 } }]) }).run(
      'hi',
    );
    expect(result.report.cost).toEqual({ totalUsd: 0, byModel: {}, unpricedCalls: 1 });
  });
});
