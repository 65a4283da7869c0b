import { TRUST_USAGE } from './trust-options.js';

// The help lines of the options several commands share, so each command's --help says the same of them.

/** `--store`. */
export const STORE_HELP = '  --store URL|PATH  postgres://... or a SQLite file (default: ./.keel/keel.db)';

/** `--json`. */
export const JSON_HELP = '  --json          print the result as JSON';

/** `--redis` of resume and cancel. */
export const REDIS_HELP = `  --redis URL     the run is in a fleet (keel worker): answers go through the queue to a worker, a
                  cancellation reaches the worker that holds the run at once`;

/** `--otlp`, `--metrics-port` and `--log`. */
export const TELEMETRY_HELP = `  --otlp URL      export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318, as
                  service.name OTEL_SERVICE_NAME (default: keel) with OTEL_RESOURCE_ATTRIBUTES; the last export,
                  as the command ends, waits at most 2 s for the receiver
  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics while the run lives, and no longer
  --log json      print JSON log lines (one per event, then the result) in place of the live view`;

/** `--allow-key-host` and the consent flags. */
export const CONSENT_HELP = `  --allow-key-host HOST
                  let an API key go to HOST (name, or name:port) when the agent file's baseUrl points there; keys
                  go only to the provider's own host over https otherwise; implies --allow-host HOST
${TRUST_USAGE}`;

/** The options of `--otlp`, `--metrics-port` and `--log`, for `parseArgs`. */
export const TELEMETRY_OPTIONS = {
  otlp: { type: 'string' },
  'metrics-port': { type: 'string' },
  log: { type: 'string' },
} as const;
