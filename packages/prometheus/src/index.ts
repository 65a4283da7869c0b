// @keel/prometheus: keel's metrics through prom-client, with a /metrics handler. Explicit exports only.
export { metricsHandler } from './metrics-handler.js';
export { type MetricsServer, type ServeOptions, serveMetrics } from './metrics-server.js';
export { type KeelPrometheus, type KeelPrometheusOptions, keelPrometheus } from './prometheus.js';
