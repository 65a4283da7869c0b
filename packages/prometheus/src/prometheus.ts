import type { IncomingMessage, ServerResponse } from 'node:http';
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
  type MetricAttributes,
  type MetricDefinition,
  type MetricsSink,
  type ObservableAgent,
  prometheusLabel,
  RunMetrics,
} from '@keel/telemetry';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsHandler } from './metrics-handler.js';
import { type MetricsServer, type ServeOptions, serveMetrics } from './metrics-server.js';

/** Options of {@link keelPrometheus}. */
export interface KeelPrometheusOptions {
  /** The registry keel's metrics join. Defaults to a new registry of their own (not prom-client's global one). */
  registry?: Registry;
  /** Adds Node's process metrics (`collectDefaultMetrics`) to the registry. Defaults to false. */
  processMetrics?: boolean;
}

/** keel's metrics as a Prometheus exposition. */
export interface KeelPrometheus {
  readonly registry: Registry;
  /** Measures every run of `agent`, and its breakers, until the returned handle is disposed. */
  observe(agent: ObservableAgent): Disposable;
  /** Reports how many retries a shared retry budget still grants (`keel_retry_budget_remaining`). */
  observeRetryBudget(name: string, budget: RetryBudget): Disposable;
  /** The run-event listener alone (no breaker metrics: those need `observe`). */
  readonly onEvent: RunEventListener;
  /** The exposition now, in the text format. */
  metrics(): Promise<string>;
  /** A `node:http` request handler: `GET /metrics` answers the exposition, any other path 404. */
  readonly handler: (request: IncomingMessage, response: ServerResponse) => void;
  /** Serves `/metrics` over HTTP (on 127.0.0.1 unless told otherwise) until closed. */
  serve(options?: ServeOptions): Promise<MetricsServer>;
}

/**
 * keel's metrics (see `KEEL_METRICS` in `@keel/telemetry`) through prom-client, ready to scrape: the GenAI
 * conventions' histograms (`gen_ai_client_operation_duration_seconds`, `gen_ai_client_token_usage`, with the
 * conventions' buckets) and keel's counters, histograms and gauges. Labels have bounded values: no run ids, no free
 * text (see the README).
 *
 * @example
 *   const prometheus = keelPrometheus();
 *   prometheus.observe(assistant);
 *   const server = await prometheus.serve({ port: 9464 });   // http://127.0.0.1:9464/metrics
 */
export function keelPrometheus(options: KeelPrometheusOptions = {}): KeelPrometheus {
  requireOptionsObject(options, 'keelPrometheus');
  rejectUnknownOptions(options, ['registry', 'processMetrics'], 'keelPrometheus');
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry)) invalid('registry must be a prom-client Registry');
  if (options.processMetrics !== undefined && typeof options.processMetrics !== 'boolean')
    invalid('processMetrics must be a boolean');
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  const collectors = new Map<string, Counter | Gauge | Histogram>();
  let runMetrics: RunMetrics | undefined;
  for (const metric of Object.values(KEEL_METRICS) as MetricDefinition[]) {
    const common = {
      name: metric.prometheusName,
      help: metric.description,
      labelNames: metric.attributes.map(prometheusLabel),
      registers: [registry],
    };
    if (metric.instrument === 'counter') collectors.set(metric.name, new Counter(common));
    else if (metric.instrument === 'histogram')
      collectors.set(metric.name, new Histogram({ ...common, buckets: [...(metric.buckets ?? [])] }));
    else if (metric.instrument === 'up-down-counter') collectors.set(metric.name, new Gauge(common));
    else {
      collectors.set(
        metric.name,
        new Gauge({
          ...common,
          collect() {
            this.reset();
            for (const reading of runMetrics?.gauges() ?? []) {
              if (reading.metric.name === metric.name) this.set(labelsOf(reading.attributes), reading.value);
            }
          },
        }),
      );
    }
  }
  const collector = <T>(metric: MetricDefinition) => collectors.get(metric.name) as T;
  const sink: MetricsSink = {
    add(metric, value, attributes) {
      if (metric.instrument === 'up-down-counter') collector<Gauge>(metric).inc(labelsOf(attributes), value);
      else collector<Counter>(metric).inc(labelsOf(attributes), value);
    },
    record(metric, value, attributes) {
      collector<Histogram>(metric).observe(labelsOf(attributes), value);
    },
  };
  runMetrics = new RunMetrics(sink);
  const measured = runMetrics;
  return {
    registry,
    observe: (agent) => measured.observe(agent),
    observeRetryBudget: (name, budget) => measured.observeRetryBudget(name, budget),
    onEvent: (event) => measured.handle(event),
    metrics: () => registry.metrics(),
    handler: metricsHandler(registry),
    serve: (serveOptions) => serveMetrics(registry, serveOptions),
  };
}

function labelsOf(attributes: MetricAttributes): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributes)) labels[prometheusLabel(key)] = value;
  return labels;
}

function invalid(message: string): never {
  throw new KeelError('config.invalid', `keelPrometheus: ${message}`, { data: { where: 'keelPrometheus' } });
}
