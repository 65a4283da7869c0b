// @keel/otel: OpenTelemetry spans and metrics of keel runs, on @opentelemetry/api only. Explicit exports only.
export { type KeelMetrics, type KeelMetricsOptions, keelMetrics } from './metrics.js';
export { parseTraceparent, traceHeadersOf, traceparentOf } from './trace-headers.js';
export { tracedTool, tracedTools } from './traced-tools.js';
export {
  INSTRUMENTATION_NAME,
  INSTRUMENTATION_VERSION,
  type KeelTracing,
  type KeelTracingOptions,
  keelTracing,
  type ToolCallRef,
} from './tracing.js';
