/** How a metric is measured. */
export type MetricInstrument = 'counter' | 'up-down-counter' | 'histogram' | 'gauge';

/**
 * One metric keel exports: the same definition drives the OpenTelemetry instrument and the Prometheus collector, so
 * both expositions carry the same series. Attribute keys are OpenTelemetry's; a Prometheus label is the key with a
 * leading `keel.` removed and dots turned into underscores (see `prometheusLabel`).
 */
export interface MetricDefinition {
  /** The OpenTelemetry instrument name, such as `gen_ai.client.operation.duration`. */
  readonly name: string;
  /** The Prometheus metric name: the OpenTelemetry name with underscores, the unit and `_total` (counters) as suffixes. */
  readonly prometheusName: string;
  readonly instrument: MetricInstrument;
  /** UCUM unit, as OpenTelemetry wants it (`s`, `{token}`). */
  readonly unit: string;
  readonly description: string;
  /** Every attribute the metric may carry; each has a bounded set of values (see the package README). */
  readonly attributes: readonly string[];
  /** Histogram bucket boundaries, in the metric's unit. */
  readonly buckets?: readonly number[];
}

/** The GenAI conventions' boundaries for `gen_ai.client.operation.duration`, in seconds. */
export const OPERATION_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** The GenAI conventions' boundaries for `gen_ai.client.token.usage`, in tokens. */
export const TOKEN_USAGE_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** Boundaries for whole runs, in seconds: from a tenth of a second to an hour. */
export const RUN_DURATION_BUCKETS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
];

/** Boundaries for tool calls, in seconds. */
export const TOOL_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** Boundaries for checkpoint writes, in seconds: from half a millisecond to a few seconds. */
export const CHECKPOINT_DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** Every metric keel exports, by a short name. */
export const KEEL_METRICS = {
  operationDuration: {
    name: 'gen_ai.client.operation.duration',
    prometheusName: 'gen_ai_client_operation_duration_seconds',
    instrument: 'histogram',
    unit: 's',
    description: 'GenAI operation duration: one upstream model request (one attempt).',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.request.model',
      'gen_ai.response.model',
      'error.type',
    ],
    buckets: OPERATION_DURATION_BUCKETS,
  },
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    prometheusName: 'gen_ai_client_token_usage',
    instrument: 'histogram',
    unit: '{token}',
    description: 'Number of input and output tokens used, per upstream model request.',
    attributes: [
      'gen_ai.operation.name',
      'gen_ai.provider.name',
      'gen_ai.token.type',
      'gen_ai.request.model',
      'gen_ai.response.model',
    ],
    buckets: TOKEN_USAGE_BUCKETS,
  },
  runs: {
    name: 'keel.runs',
    prometheusName: 'keel_runs_total',
    instrument: 'counter',
    unit: '{run}',
    description: 'Runs that ended (a resumed run counts again at its next end), by status and stop reason.',
    attributes: ['keel.agent.name', 'keel.run.status', 'keel.run.stop_reason'],
  },
  runsActive: {
    name: 'keel.runs.active',
    prometheusName: 'keel_runs_active',
    instrument: 'up-down-counter',
    unit: '{run}',
    description: 'Runs going on in this process now.',
    attributes: ['keel.agent.name'],
  },
  runDuration: {
    name: 'keel.run.duration',
    prometheusName: 'keel_run_duration_seconds',
    instrument: 'histogram',
    unit: 's',
    description: "A run's duration from its start to its end, as its report counts it.",
    attributes: ['keel.agent.name', 'keel.run.status'],
    buckets: RUN_DURATION_BUCKETS,
  },
  modelRequests: {
    name: 'keel.model.requests',
    prometheusName: 'keel_model_requests_total',
    instrument: 'counter',
    unit: '{request}',
    description: 'Upstream model requests sent (each attempt), by model and outcome.',
    attributes: ['keel.model', 'keel.outcome', 'error.type'],
  },
  modelCost: {
    name: 'keel.model.cost',
    prometheusName: 'keel_model_cost_usd_total',
    instrument: 'counter',
    unit: 'USD',
    description:
      "What answered model requests cost, in US dollars, by the agent's price table; by model and tenant (bounded: see maxTenants).",
    attributes: ['keel.model', 'keel.tenant'],
  },
  retries: {
    name: 'keel.retries',
    prometheusName: 'keel_retries_total',
    instrument: 'counter',
    unit: '{retry}',
    description: 'Retries scheduled, by what was retried and the failure that made it retry.',
    attributes: ['keel.dependency.kind', 'keel.dependency.name', 'error.type'],
  },
  fallbacks: {
    name: 'keel.fallbacks',
    prometheusName: 'keel_fallbacks_total',
    instrument: 'counter',
    unit: '{fallback}',
    description: 'Switches from one model of the chain to the next, by the failure that caused them.',
    attributes: ['keel.fallback.from', 'keel.fallback.to', 'error.type'],
  },
  breakerState: {
    name: 'keel.breaker.state',
    prometheusName: 'keel_breaker_state',
    instrument: 'gauge',
    unit: '1',
    description: "1 for each breaker's current state (closed, open, half-open), 0 for the others.",
    attributes: ['keel.agent.name', 'keel.breaker.name', 'keel.dependency.kind', 'keel.breaker.state'],
  },
  breakerTransitions: {
    name: 'keel.breaker.transitions',
    prometheusName: 'keel_breaker_transitions_total',
    instrument: 'counter',
    unit: '{transition}',
    description: 'Breaker state changes, by breaker and the state entered.',
    attributes: ['keel.agent.name', 'keel.breaker.name', 'keel.dependency.kind', 'keel.breaker.state'],
  },
  corrections: {
    name: 'keel.corrections',
    prometheusName: 'keel_corrections_total',
    instrument: 'counter',
    unit: '{correction}',
    description: 'Self-corrections asked of the model, by kind.',
    attributes: ['keel.correction.kind'],
  },
  toolCalls: {
    name: 'keel.tool.calls',
    prometheusName: 'keel_tool_calls_total',
    instrument: 'counter',
    unit: '{call}',
    description: 'Tool calls executed, by tool and outcome; failed ones by error code.',
    attributes: ['gen_ai.tool.name', 'keel.outcome', 'error.type'],
  },
  toolDuration: {
    name: 'keel.tool.duration',
    prometheusName: 'keel_tool_duration_seconds',
    instrument: 'histogram',
    unit: 's',
    description: 'Tool call duration, retries included.',
    attributes: ['gen_ai.tool.name', 'keel.outcome'],
    buckets: TOOL_DURATION_BUCKETS,
  },
  guardrailTrips: {
    name: 'keel.guardrail.trips',
    prometheusName: 'keel_guardrail_trips_total',
    instrument: 'counter',
    unit: '{trip}',
    description: 'Guardrails that blocked or redacted something.',
    attributes: [
      'keel.guardrail.name',
      'keel.guardrail.stage',
      'keel.guardrail.action',
      'keel.guardrail.trigger',
    ],
  },
  contextReductions: {
    name: 'keel.context.reductions',
    prometheusName: 'keel_context_reductions_total',
    instrument: 'counter',
    unit: '{reduction}',
    description: 'Conversations shrunk after a context overflow.',
    attributes: [],
  },
  retryBudgetRemaining: {
    name: 'keel.retry_budget.remaining',
    prometheusName: 'keel_retry_budget_remaining',
    instrument: 'gauge',
    unit: '{retry}',
    description: 'Retries a shared retry budget would still grant now.',
    attributes: ['keel.retry_budget.name'],
  },
  checkpoints: {
    name: 'keel.checkpoints',
    prometheusName: 'keel_checkpoints_total',
    instrument: 'counter',
    unit: '{checkpoint}',
    description: 'Checkpoints written to the run store, by transition and outcome.',
    attributes: ['keel.checkpoint.transition', 'keel.outcome', 'error.type'],
  },
  checkpointDuration: {
    name: 'keel.checkpoint.duration',
    prometheusName: 'keel_checkpoint_duration_seconds',
    instrument: 'histogram',
    unit: 's',
    description:
      'Time to write one checkpoint (ledger entry, lease renewal and state), store retries included.',
    attributes: ['keel.checkpoint.transition', 'keel.outcome'],
    buckets: CHECKPOINT_DURATION_BUCKETS,
  },
  storeErrors: {
    name: 'keel.store.errors',
    prometheusName: 'keel_store_errors_total',
    instrument: 'counter',
    unit: '{error}',
    description:
      'Run store writes that failed: each one retried, and each checkpoint given up on, by error code.',
    attributes: ['error.type'],
  },
} as const satisfies Record<string, MetricDefinition>;

/** The short name of a metric of {@link KEEL_METRICS}. */
export type KeelMetricName = keyof typeof KEEL_METRICS;

/** A Prometheus label name for an attribute key: `keel.` dropped, dots to underscores (`error.type` → `error_type`). */
export function prometheusLabel(attribute: string): string {
  return attribute.replace(/^keel\./, '').replaceAll('.', '_');
}
