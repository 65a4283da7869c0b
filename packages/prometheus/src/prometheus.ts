import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Disposable, RetryBudget, RunEventListener } from '@keel/core';
import { rejectUnknownOptions, requireOptionsObject, throwOptionError } from '@keel/core/adapter';
import {
  KEEL_METRICS,
  LABEL_BOUNDS_OPTIONS,
  LabelBounds,
  type LabelBoundsOptions,
  type MetricAttributes,
  type MetricDefinition,
  type ObservableAgent,
  prometheusLabel,
  RunMetrics,
} from '@keel/telemetry';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { metricsHandler } from './metrics-handler.js';
import { type MetricsServer, type ServeOptions, serveMetrics } from './metrics-server.js';

/**
 * Options of {@link keelPrometheus}. `secrets`, `maxResponseModels` and `maxToolNames` bound and redact the labels
 * that come from outside the configuration (response models, tool names); see `LabelBoundsOptions` of
 * `@keel/telemetry`.
 */
export interface KeelPrometheusOptions extends LabelBoundsOptions {
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
  requireOptionsObject(options, { where: 'keelPrometheus' });
  rejectUnknownOptions(options, ['registry', 'processMetrics', ...LABEL_BOUNDS_OPTIONS], {
    where: 'keelPrometheus',
  });
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry))
    throwOptionError({
      where: 'keelPrometheus',
      option: 'registry',
      message: 'registry must be a prom-client Registry',
    });
  if (options.processMetrics !== undefined && typeof options.processMetrics !== 'boolean')
    throwOptionError({
      where: 'keelPrometheus',
      option: 'processMetrics',
      message: 'processMetrics must be a boolean',
    });
  // Checked before anything joins the registry, so that a mistake leaves it as it was.
  const bounds = new LabelBounds(options, 'keelPrometheus');
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });

  let runMetrics: RunMetrics | undefined;
  const histograms = new Map<string, Histogram>();
  for (const metric of Object.values(KEEL_METRICS) as MetricDefinition[]) {
    const common = {
      name: metric.prometheusName,
      help: metric.description,
      labelNames: metric.attributes.map(prometheusLabel),
      registers: [registry],
    };
    if (metric.instrument === 'histogram') {
      histograms.set(metric.name, new Histogram({ ...common, buckets: [...(metric.buckets ?? [])] }));
      continue;
    }
    // Counters and gauges are read at each scrape: keel sums counters itself (see RunMetrics).
    const collect = function (this: Counter | Gauge) {
      this.reset();
      const readings = metric.instrument === 'gauge' ? runMetrics?.gauges() : runMetrics?.counters();
      for (const reading of readings ?? []) {
        if (reading.metric.name !== metric.name) continue;
        if (this instanceof Gauge) this.set(labelsOf(reading.attributes), reading.value);
        else this.inc(labelsOf(reading.attributes), reading.value);
      }
    };
    if (metric.instrument === 'counter') new Counter({ ...common, collect });
    else new Gauge({ ...common, collect });
  }
  runMetrics = new RunMetrics(
    {
      histogram(metric) {
        const histogram = histograms.get(metric.name);
        if (histogram === undefined) throw new Error(`keelPrometheus: ${metric.name} is not a histogram`);
        return (value, attributes) => histogram.observe(labelsOf(attributes), value);
      },
    },
    bounds,
  );
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

/** Prometheus labels of each attribute object: keel reuses one object per label combination. */
const labelsOfAttributes = new WeakMap<MetricAttributes, Record<string, string>>();

function labelsOf(attributes: MetricAttributes): Record<string, string> {
  let labels = labelsOfAttributes.get(attributes);
  if (labels === undefined) {
    labels = {};
    for (const [key, value] of Object.entries(attributes)) labels[prometheusLabel(key)] = value;
    labelsOfAttributes.set(attributes, labels);
  }
  return labels;
}
