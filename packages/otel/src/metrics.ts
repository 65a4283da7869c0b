import type { Counter, Histogram, Meter, ObservableGauge, UpDownCounter } from '@opentelemetry/api';
import { metrics } from '@opentelemetry/api';
import {
  type Disposable,
  KeelError,
  type RetryBudget,
  type RunEventListener,
  rejectUnknownOptions,
  requireOptionsObject,
} from '@keel/core';
import {
  KEEL_METRICS,
  type MetricDefinition,
  type MetricsSink,
  type ObservableAgent,
  RunMetrics,
} from '@keel/telemetry';
import { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './tracing.js';

/** Options of {@link keelMetrics}. */
export interface KeelMetricsOptions {
  /** Where measurements go. Defaults to the global meter provider's meter `@keel/otel` (a no-op until an SDK registers). */
  meter?: Meter;
}

/** keel's metrics through the OpenTelemetry metrics API. */
export interface KeelMetrics {
  /** Measures every run of `agent`, and its breakers, until the returned handle is disposed. */
  observe(agent: ObservableAgent): Disposable;
  /** Reports how many retries a shared retry budget still grants (`keel.retry_budget.remaining`). */
  observeRetryBudget(name: string, budget: RetryBudget): Disposable;
  /** The run-event listener alone (no breaker metrics: those need `observe`). */
  readonly onEvent: RunEventListener;
  /** Stops reporting gauges. */
  dispose(): void;
}

/**
 * Records keel's metrics (see `KEEL_METRICS` in `@keel/telemetry`) through the OpenTelemetry metrics API: the GenAI
 * conventions' `gen_ai.client.operation.duration` and `gen_ai.client.token.usage` histograms, with their advised
 * bucket boundaries, and keel's own counters, histograms and gauges. Every attribute has a bounded set of values.
 *
 * @example
 *   const keel = keelMetrics({ meter: meterProvider.getMeter('my-app') });
 *   keel.observe(assistant);
 */
export function keelMetrics(options: KeelMetricsOptions = {}): KeelMetrics {
  requireOptionsObject(options, 'keelMetrics');
  rejectUnknownOptions(options, ['meter'], 'keelMetrics');
  const meter = options.meter ?? metrics.getMeter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
  if (typeof meter?.createCounter !== 'function') {
    throw new KeelError('config.invalid', 'keelMetrics: meter must be an OpenTelemetry Meter', {
      data: { option: 'meter' },
    });
  }
  const instruments = new Map<string, Counter | UpDownCounter | Histogram>();
  const instrumentOf = (metric: MetricDefinition) => {
    let instrument = instruments.get(metric.name);
    if (instrument !== undefined) return instrument;
    const base = { unit: metric.unit, description: metric.description };
    if (metric.instrument === 'counter') instrument = meter.createCounter(metric.name, base);
    else if (metric.instrument === 'up-down-counter')
      instrument = meter.createUpDownCounter(metric.name, base);
    else {
      instrument = meter.createHistogram(metric.name, {
        ...base,
        ...(metric.buckets === undefined
          ? {}
          : { advice: { explicitBucketBoundaries: [...metric.buckets] } }),
      });
    }
    instruments.set(metric.name, instrument);
    return instrument;
  };
  const sink: MetricsSink = {
    add: (metric, value, attributes) => (instrumentOf(metric) as Counter).add(value, attributes),
    record: (metric, value, attributes) => (instrumentOf(metric) as Histogram).record(value, attributes),
  };
  const runMetrics = new RunMetrics(sink);
  const gauges = new Map<string, ObservableGauge>();
  for (const metric of [KEEL_METRICS.breakerState, KEEL_METRICS.retryBudgetRemaining]) {
    gauges.set(
      metric.name,
      meter.createObservableGauge(metric.name, { unit: metric.unit, description: metric.description }),
    );
  }
  const readGauges = (result: Parameters<Parameters<Meter['addBatchObservableCallback']>[0]>[0]) => {
    for (const reading of runMetrics.gauges()) {
      const gauge = gauges.get(reading.metric.name);
      if (gauge !== undefined) result.observe(gauge, reading.value, reading.attributes);
    }
  };
  meter.addBatchObservableCallback(readGauges, [...gauges.values()]);
  return {
    observe: (agent) => runMetrics.observe(agent),
    observeRetryBudget: (name, budget) => runMetrics.observeRetryBudget(name, budget),
    onEvent: (event) => runMetrics.handle(event),
    dispose: () => meter.removeBatchObservableCallback(readGauges, [...gauges.values()]),
  };
}
