import { type Disposable, KeelError, type RetryBudget, type RunEventListener } from '@keel/core';
import { rejectUnknownOptions, requireOptionsObject } from '@keel/core/adapter';
import {
  KEEL_METRICS,
  LABEL_BOUNDS_OPTIONS,
  LabelBounds,
  type LabelBoundsOptions,
  type MetricDefinition,
  type MetricReading,
  type ObservableAgent,
  RunMetrics,
} from '@keel/telemetry';
import type { BatchObservableCallback, BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
import { metrics } from '@opentelemetry/api';
import { HistogramBuffer } from './histogram-buffer.js';
import { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './tracing.js';

/**
 * Options of {@link keelMetrics}. `secrets`, `maxResponseModels` and `maxToolNames` bound and redact the labels that
 * come from outside the configuration (response models, tool names); see `LabelBoundsOptions` of `@keel/telemetry`.
 */
export interface KeelMetricsOptions extends LabelBoundsOptions {
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
  /** Stops reporting counters and gauges. */
  dispose(): void;
}

/**
 * Records keel's metrics (see `KEEL_METRICS` in `@keel/telemetry`) through the OpenTelemetry metrics API: the GenAI
 * conventions' `gen_ai.client.operation.duration` and `gen_ai.client.token.usage` histograms, with their advised
 * bucket boundaries, and keel's own counters, histograms and gauges. Every attribute has a bounded set of values.
 * Counters are observable instruments: keel sums them as runs go and reports the totals when the SDK collects, so a
 * step pays an addition for each, not the SDK's hashing of its attributes. Histogram measurements (one per operation:
 * a model call's duration and tokens, a tool call's duration) are held as a run goes and recorded at the run's end, or
 * when the SDK collects, whichever comes first (see `HistogramBuffer`), with one attribute object per label
 * combination.
 *
 * @example
 *   const keel = keelMetrics({ meter: meterProvider.getMeter('my-app') });
 *   keel.observe(assistant);
 */
export function keelMetrics(options: KeelMetricsOptions = {}): KeelMetrics {
  requireOptionsObject(options, { where: 'keelMetrics' });
  rejectUnknownOptions(options, ['meter', ...LABEL_BOUNDS_OPTIONS], { where: 'keelMetrics' });
  const meter = options.meter ?? metrics.getMeter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
  if (typeof meter?.createCounter !== 'function') {
    throw new KeelError('config.invalid', 'keelMetrics: meter must be an OpenTelemetry Meter', {
      data: { option: 'meter' },
    });
  }
  const bounds = new LabelBounds(options, 'keelMetrics');
  const buffer = new HistogramBuffer();
  const runMetrics = new RunMetrics(
    {
      histogram: (metric) => {
        const histogram = meter.createHistogram(metric.name, {
          unit: metric.unit,
          description: metric.description,
          ...(metric.buckets === undefined
            ? {}
            : { advice: { explicitBucketBoundaries: [...metric.buckets] } }),
        });
        return (value, attributes) => buffer.record(histogram, value, attributes);
      },
    },
    bounds,
  );
  // Counters and gauges are read when the SDK collects: keel sums counters itself (see RunMetrics), so a step does
  // not pay the SDK's hashing of attributes for each of them.
  const observables = new Map<string, Observable>();
  for (const metric of Object.values(KEEL_METRICS) as MetricDefinition[]) {
    const base = { unit: metric.unit, description: metric.description };
    if (metric.instrument === 'counter')
      observables.set(metric.name, meter.createObservableCounter(metric.name, base));
    else if (metric.instrument === 'up-down-counter')
      observables.set(metric.name, meter.createObservableUpDownCounter(metric.name, base));
    else if (metric.instrument === 'gauge')
      observables.set(metric.name, meter.createObservableGauge(metric.name, base));
  }
  const report = (result: BatchObservableResult, readings: Iterable<MetricReading>) => {
    for (const reading of readings) {
      const observable = observables.get(reading.metric.name);
      if (observable !== undefined) result.observe(observable, reading.value, reading.attributes);
    }
  };
  const collect: BatchObservableCallback = (result) => {
    // Before the SDK reads the histograms (it calls this first): a collection sees every measurement made so far.
    buffer.flush();
    report(result, runMetrics.counters());
    report(result, runMetrics.gauges());
  };
  meter.addBatchObservableCallback(collect, [...observables.values()]);
  // One listener per agent: measuring an event and handing the held measurements to the SDK at a run's end are one
  // call (a listener is a call per event, 49 events in a run of 10 steps).
  const onEvent: RunEventListener = (event) => {
    runMetrics.handle(event);
    if (event.type === 'run-end') buffer.flush();
  };
  return {
    observe: (agent) => runMetrics.observe(agent, onEvent),
    observeRetryBudget: (name, budget) => runMetrics.observeRetryBudget(name, budget),
    onEvent,
    dispose: () => {
      buffer.flush();
      meter.removeBatchObservableCallback(collect, [...observables.values()]);
    },
  };
}
