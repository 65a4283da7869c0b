import { describe, expect, it } from 'vitest';
import { breakerTarget, errorType, MAX_LABEL_VALUE_CHARS, modelParts, nameLabel } from './label-values.js';
import { KEEL_METRICS, prometheusLabel } from './metric-catalogue.js';

describe('label values', () => {
  it('keeps keel error codes and turns anything else into _OTHER', () => {
    expect(errorType('provider.rate_limited')).toBe('provider.rate_limited');
    expect(errorType('Error: connect ECONNREFUSED 10.0.0.7:443')).toBe('_OTHER');
  });

  it('cuts names from configuration to a bounded length', () => {
    expect(nameLabel('get_weather')).toBe('get_weather');
    expect(nameLabel('x'.repeat(500))).toHaveLength(MAX_LABEL_VALUE_CHARS);
  });

  it('splits model keys at the first slash and tells tool breakers from model breakers', () => {
    expect(modelParts('openai/gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(modelParts('together/meta-llama/Llama-3-70b')).toEqual({
      provider: 'together',
      model: 'meta-llama/Llama-3-70b',
    });
    expect(breakerTarget('tool:get_weather')).toEqual({ kind: 'tool', name: 'get_weather' });
    expect(breakerTarget('anthropic/claude-haiku-4-5')).toEqual({
      kind: 'model',
      name: 'anthropic/claude-haiku-4-5',
    });
  });
});

describe('the metric catalogue', () => {
  const metrics = Object.values(KEEL_METRICS);

  it('names every metric for both expositions, as Prometheus wants them', () => {
    for (const metric of metrics) {
      expect(metric.prometheusName).toMatch(/^[a-z_][a-z0-9_]*$/);
      if (metric.instrument === 'counter') expect(metric.prometheusName).toMatch(/_total$/);
      if (metric.unit === 's') expect(metric.prometheusName).toMatch(/_seconds$/);
      for (const attribute of metric.attributes)
        expect(prometheusLabel(attribute)).toMatch(/^[a-z_][a-z0-9_]*$/);
    }
    expect(new Set(metrics.map((metric) => metric.prometheusName)).size).toBe(metrics.length);
  });

  it('has no label that could hold a run id, a call id or free text', () => {
    const labels = new Set<string>(metrics.flatMap((metric) => metric.attributes));
    for (const forbidden of [
      'keel.run.id',
      'keel.tool.idempotency_key',
      'gen_ai.tool.call.id',
      'error.message',
    ]) {
      expect(labels.has(forbidden)).toBe(false);
    }
  });

  it("uses the GenAI conventions' bucket boundaries", () => {
    expect(KEEL_METRICS.operationDuration.buckets).toEqual([
      0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ]);
    expect(KEEL_METRICS.tokenUsage.buckets).toEqual([
      1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
    ]);
  });
});
