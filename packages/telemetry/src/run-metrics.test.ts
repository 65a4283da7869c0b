import { describe, expect, it } from 'vitest';
import type { MetricAttributes } from './counter-table.js';
import { KEEL_METRICS, type MetricDefinition } from './metric-catalogue.js';
import { RunMetrics } from './run-metrics.js';
import { faultyAgent } from './test-faulty-agent.js';

/** A sink that keeps every histogram measurement. */
function recordingSink() {
  const recorded: { metric: string; value: number; attributes: MetricAttributes }[] = [];
  return {
    recorded,
    sink: {
      histogram: (metric: MetricDefinition) => (value: number, attributes: MetricAttributes) => {
        recorded.push({ metric: metric.name, value, attributes });
      },
    },
  };
}

describe('RunMetrics', () => {
  it('sums counters in one series per label combination, read when metrics are collected', async () => {
    const { sink } = recordingSink();
    const metrics = new RunMetrics(sink);
    // Two agents of one name (their scripted models answer one run each), measured by one RunMetrics.
    for (const assistant of [faultyAgent({ retryDelayMs: 0 }), faultyAgent({ retryDelayMs: 0 })]) {
      metrics.observe(assistant);
      await assistant.run('Weather in Paris, then pay');
    }

    const series = [...metrics.counters()];
    const requests = series.filter((reading) => reading.metric === KEEL_METRICS.modelRequests);
    expect(requests.map((reading) => [reading.attributes, reading.value])).toEqual([
      [
        {
          'keel.model': 'openai/gpt-primary',
          'keel.outcome': 'error',
          'error.type': 'provider.server_error',
        },
        4,
      ],
      [{ 'keel.model': 'anthropic/claude-backup', 'keel.outcome': 'success' }, 4],
    ]);
    const runs = series.filter((reading) => reading.metric === KEEL_METRICS.runs);
    expect(runs.map((reading) => reading.value)).toEqual([2]);
    const active = series.find((reading) => reading.metric === KEEL_METRICS.runsActive);
    expect(active?.value).toBe(0);
    for (const reading of series) expect(Object.isFrozen(reading.attributes)).toBe(true);
  });

  it('records each histogram with one frozen attribute object per label combination', async () => {
    const { sink, recorded } = recordingSink();
    const metrics = new RunMetrics(sink);
    // Two agents of one name (their scripted models answer one run each), measured by one RunMetrics.
    for (const assistant of [faultyAgent({ retryDelayMs: 0 }), faultyAgent({ retryDelayMs: 0 })]) {
      metrics.observe(assistant);
      await assistant.run('Weather in Paris, then pay');
    }

    const inputTokens = recorded.filter(
      (entry) =>
        entry.metric === KEEL_METRICS.tokenUsage.name && entry.attributes['gen_ai.token.type'] === 'input',
    );
    expect(inputTokens.map((entry) => entry.value)).toEqual([120, 300, 120, 300]);
    expect(new Set(inputTokens.map((entry) => entry.attributes)).size).toBe(1);
    expect(Object.isFrozen(inputTokens[0]!.attributes)).toBe(true);
    const toolDurations = recorded.filter((entry) => entry.metric === KEEL_METRICS.toolDuration.name);
    // get_weather succeeded and charge_card failed in each run: two label combinations, two objects.
    expect(toolDurations).toHaveLength(4);
    expect(new Set(toolDurations.map((entry) => entry.attributes)).size).toBe(2);
  });
});
