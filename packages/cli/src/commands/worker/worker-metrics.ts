// What `keel worker` counts of its own, beside the metrics of the runs it executes (those come from the agents' run
// events, as for keel run): the runs it took, started, resumed, finished, handed back and swept, and its failures.
// One definition per metric drives both the Prometheus counter and the OpenTelemetry one, as keel's catalogue does.

import { errorType, type MetricDefinition, nameLabel, prometheusLabel } from '@keel/telemetry';
import type { WorkerEvent, WorkerEventListener } from '@keel/worker';
import type { Meter } from '@opentelemetry/api';
import { Counter, type Registry } from 'prom-client';

/** `keel_worker_runs_total`: runs by what the worker did with them (`worker_event`), and why it handed one back. */
export const WORKER_RUNS = {
  name: 'keel.worker.runs',
  prometheusName: 'keel_worker_runs_total',
  instrument: 'counter',
  unit: '{run}',
  description:
    'Runs this worker took from the queue, started, resumed from a checkpoint, finished (in any end state), handed back to the queue (with the reason) or enqueued again by its sweep.',
  attributes: ['keel.agent.name', 'keel.worker.event', 'keel.requeue.reason'],
} as const satisfies MetricDefinition;

/** `keel_worker_errors_total`: failures of the worker itself (Redis or the store unreachable, a job it could not run). */
export const WORKER_ERRORS = {
  name: 'keel.worker.errors',
  prometheusName: 'keel_worker_errors_total',
  instrument: 'counter',
  unit: '{error}',
  description:
    'Failures of the worker itself (Redis or the store unreachable, a job it could not run), by error code.',
  attributes: ['error.type'],
} as const satisfies MetricDefinition;

/** The value of `keel.worker.event` for each worker event about a run. */
const EVENT_NAMES = {
  'run-taken': 'taken',
  'run-started': 'started',
  'run-resumed': 'resumed',
  'run-finished': 'finished',
  'run-requeued': 'requeued',
  'run-swept': 'swept',
} as const satisfies Record<Exclude<WorkerEvent['type'], 'worker-error'>, string>;

/** Where {@link workerMetrics} counts. */
export interface WorkerMetricsSinks {
  /** The Prometheus registry `/metrics` serves. Defaults to none. */
  registry?: Registry | undefined;
  /** The OpenTelemetry meter that exports over OTLP. Defaults to none. */
  meter?: Meter | undefined;
}

/**
 * Counts a worker's events in {@link WORKER_RUNS} and {@link WORKER_ERRORS}, in the registry and the meter given;
 * undefined when neither is. The series of each agent's events (requeues aside, which have a reason) start at 0, so
 * a rate is defined from the worker's start.
 */
export function workerMetrics(
  sinks: WorkerMetricsSinks,
  agentNames: readonly string[],
): WorkerEventListener | undefined {
  if (sinks.registry === undefined && sinks.meter === undefined) return undefined;
  const runs = counterOf(WORKER_RUNS, sinks);
  const errors = counterOf(WORKER_ERRORS, sinks);
  for (const agentName of agentNames) {
    for (const event of ['taken', 'started', 'resumed', 'finished', 'swept']) {
      runs(0, { 'keel.agent.name': nameLabel(agentName), 'keel.worker.event': event });
    }
  }
  return (event) => {
    if (event.type === 'worker-error') {
      errors(1, { 'error.type': errorType(event.error.code) });
      return;
    }
    runs(1, {
      'keel.agent.name': nameLabel(event.agentName),
      'keel.worker.event': EVENT_NAMES[event.type],
      ...(event.type === 'run-requeued' ? { 'keel.requeue.reason': event.reason } : {}),
    });
  };
}

/** Adds to a counter in each sink: `value` for the series of `attributes` (keys of `metric.attributes`). */
function counterOf(
  metric: MetricDefinition,
  sinks: WorkerMetricsSinks,
): (value: number, attributes: Record<string, string>) => void {
  const prometheus =
    sinks.registry === undefined
      ? undefined
      : new Counter({
          name: metric.prometheusName,
          help: metric.description,
          labelNames: metric.attributes.map(prometheusLabel),
          registers: [sinks.registry],
        });
  const otel = sinks.meter?.createCounter(metric.name, {
    unit: metric.unit,
    description: metric.description,
  });
  return (value, attributes) => {
    otel?.add(value, attributes);
    if (prometheus === undefined) return;
    const labels: Record<string, string> = {};
    for (const [key, label] of Object.entries(attributes)) labels[prometheusLabel(key)] = label;
    prometheus.inc(labels, value);
  };
}
