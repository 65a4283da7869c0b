// What `keel worker` takes and what its --help says, apart from the command so that the command table reads them
// without loading BullMQ and the Redis client.
import { TRUST_OPTIONS } from '../trust-options.js';

/** `keel worker --help`. */
export const WORKER_USAGE = `keel worker: run the queued runs of agent files, as one worker of a fleet

usage:
  keel worker <agent.yaml>... [--store URL|PATH] [--redis URL] [--concurrency N] [--lease-ttl-ms N]
              [--tenant-limit [TENANT=]N]... [--policy-state shared|local|closed] [--faults SPEC] [--seed N]
              [--allow-host HOST]... [--allow-programs] [--allow-env NAME]... [--allow-key-host HOST]... [--json]
              [--metrics-port N] [--otlp URL] [--log json]

Takes the runs submitted (keel submit) for the agents of its files, runs them durably on the shared store, and
prints a line when it takes a run, starts or resumes it, finishes it or hands it back. A run whose worker died is
resumed by another from its last checkpoint once the dead worker's lease ends; a tool call's effect is never
repeated. On SIGTERM or Ctrl-C it takes no more runs, lets the running ones reach a checkpoint with no tool call
running, hands them back to the queue for another worker, and exits 0 (also when it comes before the worker is
ready: the start stops there).

The workers of a fleet share their breakers and retry budget through the same Redis: a provider that is down is
probed once per half-open period by the whole fleet, and every worker stops calling it once its breaker opens.

options:
  --store URL       the fleet's run store: postgres://... (or a SQLite file on one machine; default ./.keel/keel.db)
  --redis URL       the fleet's Redis (default: KEEL_REDIS_URL, else redis://127.0.0.1:6379)
  --concurrency N   runs at once, per agent (default: 1)
  --lease-ttl-ms N  how long a run stays leased to a worker that stopped renewing it: a dead worker's runs are
                    taken again after about this long (default: 30000)
  --tenant-limit N, --tenant-limit TENANT=N
                    most runs of one tenant (keel submit --tenant) running at once across the fleet: N for every
                    tenant, TENANT=N for one (repeatable; default: no limit). A run beyond it goes back to the queue
                    for a second and is tried again; a dead worker's places come back after --lease-ttl-ms. Give
                    every worker the same limits
  --policy-state shared|local|closed
                    where breakers and the retry budget live: shared through Redis, going on with each worker's own
                    state while Redis cannot be reached (shared, the default); shared, refusing model and tool calls
                    while Redis cannot be reached (closed); or each worker's own (local)
  --faults SPEC     fault schedule of the simulated provider, as for keel run (default: none)
  --seed N          seed of the fault schedule (default: 1)
  --json            print one JSON object per line: { type, runId, ... }
  --metrics-port N  serve Prometheus metrics at http://127.0.0.1:N/metrics for the worker's whole life (0 picks a
                    free port, printed in the first line): the metrics of every run it executes, as keel run has
                    them, with keel_worker_runs_total{agent_name,worker_event,requeue_reason} (runs taken,
                    started, resumed, finished, requeued, swept), keel_worker_errors_total{error_type} and, with
                    shared policy state, keel_retry_budget_remaining{retry_budget_name="fleet"}
  --otlp URL        export traces and metrics over OTLP/HTTP to a receiver, such as http://127.0.0.1:4318: a span
                    tree per run, a resumed run's span linked to its earlier attempts (in this worker or another),
                    and the same metrics; what is left is exported on SIGTERM before the worker exits (waiting at
                    most 2 s for the receiver); service.name is OTEL_SERVICE_NAME (default: keel), with the
                    attributes of OTEL_RESOURCE_ATTRIBUTES
  --log json        print JSON log lines in place of the worker's lines: every event of every run (retries,
                    fallbacks, tool calls, breaker moves; with trace ids under --otlp) and the worker's own
                    (taken, requeued, swept, errors, Redis lost and back); --json prints only the worker's events
  --allow-key-host HOST, --allow-host HOST, --allow-programs, --allow-env NAME
                    as for keel run: what the worker's agent files may do (checked before Redis)

exit codes: 0 stopped gracefully, 1 the store or Redis failed at the start, or the metrics port is taken,
            2 invalid input`;

/** The options of `keel worker`, for `parseArgs`. */
export const WORKER_OPTIONS = {
  store: { type: 'string' },
  redis: { type: 'string' },
  concurrency: { type: 'string' },
  'lease-ttl-ms': { type: 'string' },
  'tenant-limit': { type: 'string', multiple: true },
  'policy-state': { type: 'string' },
  faults: { type: 'string' },
  seed: { type: 'string' },
  json: { type: 'boolean' },
  'metrics-port': { type: 'string' },
  otlp: { type: 'string' },
  log: { type: 'string' },
  'allow-key-host': { type: 'string', multiple: true },
  ...TRUST_OPTIONS,
} as const;
