// @keel/telemetry: what keel measures, vendor-neutral. Explicit exports only.
export type { MetricAttributes, MetricReading } from './counter-table.js';
export {
  DEFAULT_MAX_RESPONSE_MODELS,
  DEFAULT_MAX_TENANTS,
  DEFAULT_MAX_TOOL_NAMES,
  DEFAULT_TENANT_LABEL,
  LABEL_BOUNDS_OPTIONS,
  LabelBounds,
  type LabelBoundsOptions,
  OVERFLOW_LABEL,
} from './label-bounds.js';
export { breakerTarget, errorType, MAX_LABEL_VALUE_CHARS, modelParts, nameLabel } from './label-values.js';
export {
  CHECKPOINT_DURATION_BUCKETS,
  KEEL_METRICS,
  type KeelMetricName,
  type MetricDefinition,
  type MetricInstrument,
  OPERATION_DURATION_BUCKETS,
  prometheusLabel,
  RUN_DURATION_BUCKETS,
  TOKEN_USAGE_BUCKETS,
  TOOL_DURATION_BUCKETS,
} from './metric-catalogue.js';
export {
  type HistogramRecorder,
  type MetricsSink,
  type ObservableAgent,
  RunMetrics,
} from './run-metrics.js';
export type { TraceIds, TraceIdsOf } from './trace-ids.js';
