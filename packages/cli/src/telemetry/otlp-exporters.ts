// The OTLP/HTTP exporters of the command line, in two speeds: while the command runs, an export may take
// EXPORT_TIMEOUT_MS (the SDK's retries included); once the command ends, what is left is sent with a shorter deadline,
// so that a receiver that is down cannot hold the process (the SDK's retry timers keep it alive until they fire).
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** Trace and metric exporters to one receiver that switch to their final deadline on {@link OtlpExporters.ending}. */
export interface OtlpExporters {
  readonly spans: SpanExporter;
  readonly metrics: PushMetricExporter;
  /** From now on, exports use the final deadline. */
  ending(): void;
}

/**
 * OTLP/HTTP (JSON) exporters to `base` (`/v1/traces`, `/v1/metrics`): each export may take `timeoutMs` until
 * `ending()`, then `finalTimeoutMs`.
 */
export function otlpExporters(base: string, timeoutMs: number, finalTimeoutMs: number): OtlpExporters {
  let ending = false;
  const spans = (timeoutMillis: number) => new OTLPTraceExporter({ url: `${base}/v1/traces`, timeoutMillis });
  const metrics = (timeoutMillis: number) =>
    new OTLPMetricExporter({ url: `${base}/v1/metrics`, timeoutMillis });
  const running = { spans: spans(timeoutMs), metrics: metrics(timeoutMs) };
  const final = { spans: spans(finalTimeoutMs), metrics: metrics(finalTimeoutMs) };
  const current = () => (ending ? final : running);
  const both = async (call: (exporters: typeof running) => Promise<void> | undefined) => {
    await Promise.all([call(running), call(final)]);
  };
  return {
    spans: {
      export: (batch: ReadableSpan[], done: (result: ExportResult) => void) =>
        current().spans.export(batch, done),
      shutdown: () => both((exporters) => exporters.spans.shutdown()),
      forceFlush: () => both((exporters) => exporters.spans.forceFlush()),
    },
    metrics: {
      export: (batch: ResourceMetrics, done: (result: ExportResult) => void) =>
        current().metrics.export(batch, done),
      shutdown: () => both((exporters) => exporters.metrics.shutdown()),
      forceFlush: () => both((exporters) => exporters.metrics.forceFlush()),
      selectAggregationTemporality: (type) => running.metrics.selectAggregationTemporality(type),
      selectAggregation: (type) => running.metrics.selectAggregation(type),
    },
    ending: () => {
      ending = true;
    },
  };
}
