import { agent } from '@keel/core';
import { scriptedModel } from '@keel/core/testing';
import { describe, expect, it } from 'vitest';
import { LabelBounds, OVERFLOW_LABEL } from './label-bounds.js';
import { KEEL_METRICS } from './metric-catalogue.js';
import { RunMetrics } from './run-metrics.js';

const sink = { histogram: () => () => undefined };

describe('keel.model.cost', () => {
  it('sums what answered calls cost by model and tenant, past maxTenants in the overflow bucket', async () => {
    const metrics = new RunMetrics(sink, new LabelBounds({ maxTenants: 2 }));
    const assistant = agent({
      model: scriptedModel(() => ({ content: 'ok', usage: { inputTokens: 1_000_000, outputTokens: 0 } }), {
        provider: 'openai',
        model: 'gpt-4.1-mini',
      }),
    });
    metrics.observe(assistant);
    for (const tenant of ['acme', 'acme', 'globex', 'initech', undefined]) {
      await assistant.run('hi', tenant === undefined ? {} : { tenant });
    }
    const cost = [...metrics.counters()].filter((reading) => reading.metric === KEEL_METRICS.modelCost);
    // gpt-4.1-mini input: 0.4 dollars per million tokens.
    expect(
      cost.map((reading) => [reading.attributes['keel.tenant'], Number(reading.value.toFixed(6))]),
    ).toEqual([
      ['acme', 0.8],
      ['globex', 0.4],
      [OVERFLOW_LABEL, 0.4],
      ['default', 0.4],
    ]);
    expect(cost[0]?.attributes['keel.model']).toBe('openai/gpt-4.1-mini');
  });
});
