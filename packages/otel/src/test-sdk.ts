// Test helpers (not built, not exported): the OpenTelemetry SDK with in-memory exporters.

import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A tracer provider and a meter provider whose spans and metric points stay in memory. */
export interface InMemorySdk {
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  readonly spans: InMemorySpanExporter;
  /** Collects and returns every metric exported so far (cumulative). */
  collectMetrics(): Promise<MetricData[]>;
  shutdown(): Promise<void>;
}

export function inMemorySdk(): InMemorySdk {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans,
    async collectMetrics() {
      metricExporter.reset();
      await reader.forceFlush();
      return metricExporter
        .getMetrics()
        .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** Installs an AsyncLocalStorage context manager for one test; returns its removal. */
export function useAsyncContext(): () => void {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  return () => {
    context.disable();
  };
}

/** The points of one metric, each as `{ attributes, value }`. */
export function pointsOf(metrics: readonly MetricData[], name: string): DataPoint<number | Histogram>[] {
  const metric = metrics.find((entry) => entry.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<number | Histogram>[];
}

/** The span named `name` (the first when there are several). */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((entry) => entry.name === name);
  if (span === undefined)
    throw new Error(`no span named ${name}; spans: ${spans.map((entry) => entry.name).join(', ')}`);
  return span;
}
