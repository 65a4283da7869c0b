// How `keel worker` tells what it does: a line of text per event, one JSON object per event (--json), or JSON log
// lines (--log json) that join the log lines of its runs' events.
import type { LogLevel } from '@keel/logs';
import type { WorkerEvent } from '@keel/worker';
import { type Output, paint } from '../../output/output.js';

/** Text lines, `--json` objects, or `--log json` log lines. */
export type WorkerOutputMode = 'text' | 'json' | 'log';

/** Writes one JSON log line (`CommandTelemetry.log`). */
export type LogWriter = (level: LogLevel, fields: Record<string, unknown>, message: string) => void;

/** What a worker says when it is ready. */
export interface WorkerReady {
  agents: string[];
  concurrency: number;
  pid: number;
  /** The `/metrics` URL, when `--metrics-port` was given. */
  metricsUrl?: string;
}

/** What a worker prints, from its start to its stop. */
export interface WorkerPrinter {
  ready(ready: WorkerReady): void;
  event(event: WorkerEvent): void;
  /** The fleet's Redis was lost at `atMs`: the agents' policy state follows `rule` until it returns. */
  policyStateLost(atMs: number, rule: 'shared' | 'closed', error: { code: string; message: string }): void;
  policyStateBack(atMs: number, unavailableForMs: number): void;
  stopping(): void;
  stopped(): void;
}

/**
 * The printer of `mode`. In `log` mode the worker events a run event already tells (`run-started`, `run-resumed`,
 * `run-finished`: the run's own `run-start`, `run-resumed` and `run-end` lines) are left out, so that no line is
 * said twice.
 */
export function workerPrinter(mode: WorkerOutputMode, output: Output, log: LogWriter): WorkerPrinter {
  if (mode === 'log') return logPrinter(log);
  const json = mode === 'json';
  const say = (line: Record<string, unknown>, text: string) => output.out(json ? JSON.stringify(line) : text);
  return {
    ready({ agents, concurrency, pid, metricsUrl }) {
      const metrics = metricsUrl === undefined ? '' : ` · metrics at ${metricsUrl}`;
      say(
        {
          type: 'worker-ready',
          agents,
          concurrency,
          ...(metricsUrl === undefined ? {} : { metricsUrl }),
        },
        `${paint(output, 'bold', 'keel worker')} agents ${agents.join(', ')} · concurrency ${concurrency} · pid ${pid}${metrics}`,
      );
    },
    event: (event) => say(jsonOf(event), lineOf(event, output)),
    policyStateLost(atMs, rule, error) {
      const effect =
        rule === 'closed' ? 'model and tool calls are refused' : 'each worker goes on with its own state';
      say(
        { type: 'policy-state-unavailable', atMs, rule, error },
        `${timeOf(atMs, output)}${paint(output, 'red', 'redis')}     lost: ${effect} until it returns`,
      );
    },
    policyStateBack(atMs, unavailableForMs) {
      say(
        { type: 'policy-state-recovered', atMs, unavailableForMs },
        `${timeOf(atMs, output)}${paint(output, 'green', 'redis')}     back after ${unavailableForMs} ms: breakers and budget shared again`,
      );
    },
    stopping() {
      if (!json) output.out(paint(output, 'grey', 'shutting down: runs in progress go back to the queue'));
    },
    stopped() {
      if (!json) output.out(paint(output, 'grey', 'stopped'));
    },
  };
}

function logPrinter(log: LogWriter): WorkerPrinter {
  return {
    // pino's lines carry the pid already.
    ready: ({ agents, concurrency, metricsUrl }) =>
      log(
        'info',
        {
          event: 'worker-ready',
          agents,
          concurrency,
          ...(metricsUrl === undefined ? {} : { metricsUrl }),
        },
        `worker ready: agents ${agents.join(', ')}, concurrency ${concurrency}`,
      ),
    event(event) {
      if (event.type === 'run-started' || event.type === 'run-resumed' || event.type === 'run-finished')
        return;
      const { type, ...fields } = jsonOf(event);
      log(levelOf(event), { event: type, ...fields }, messageOf(event));
    },
    policyStateLost: (atMs, rule, error) =>
      log(
        rule === 'closed' ? 'error' : 'warn',
        { event: 'policy-state-unavailable', atMs, rule, error },
        `redis lost: ${rule === 'closed' ? 'model and tool calls are refused' : 'each worker goes on with its own state'}`,
      ),
    policyStateBack: (atMs, unavailableForMs) =>
      log(
        'info',
        { event: 'policy-state-recovered', atMs, unavailableForMs },
        `redis back after ${unavailableForMs} ms`,
      ),
    stopping: () =>
      log('info', { event: 'worker-stopping' }, 'shutting down: runs in progress go back to the queue'),
    stopped: () => log('info', { event: 'worker-stopped' }, 'stopped'),
  };
}

function levelOf(event: WorkerEvent): LogLevel {
  if (event.type === 'worker-error') return 'error';
  if (event.type === 'run-swept') return 'warn';
  // Handed back on a graceful shutdown is what a shutdown does; the other reasons say something is in the way.
  if (event.type === 'run-requeued') return event.reason === 'paused' ? 'info' : 'warn';
  return 'info';
}

function messageOf(event: WorkerEvent): string {
  switch (event.type) {
    case 'run-requeued':
      return `run ${event.runId} requeued: ${event.reason}, again in ${event.delayMs} ms`;
    case 'run-swept':
      return `run ${event.runId} swept (no job carried it)`;
    case 'worker-error':
      return `worker error: ${event.error.code}: ${event.error.message}`;
    default:
      return `run ${event.runId} ${event.type.slice('run-'.length)} (agent ${event.agentName})`;
  }
}

function timeOf(atMs: number, output: Output): string {
  return `${paint(output, 'grey', new Date(atMs).toISOString().slice(11, 23))} `;
}

function jsonOf(event: WorkerEvent): Record<string, unknown> {
  if (event.type !== 'worker-error') return { ...event };
  return { ...event, error: { code: event.error.code, message: event.error.message } };
}

function lineOf(event: WorkerEvent, output: Output): string {
  const head = timeOf(event.atMs, output);
  switch (event.type) {
    case 'run-taken':
      return `${head}taken     ${event.runId}  ${event.agentName}`;
    case 'run-started':
      return `${head}started   ${event.runId}`;
    case 'run-resumed':
      return `${head}${paint(output, 'cyan', 'resumed')}   ${event.runId}  from step ${event.step}`;
    case 'run-finished': {
      const colour =
        event.status === 'completed' ? 'green' : event.status === 'interrupted' ? 'yellow' : 'red';
      const error = event.errorCode === undefined ? '' : ` ${event.errorCode}`;
      return `${head}${paint(output, colour, 'finished')}  ${event.runId}  ${event.status} (${event.stopReason})${error}`;
    }
    case 'run-requeued':
      return `${head}${paint(output, 'yellow', 'requeued')}  ${event.runId}  ${event.reason}, again in ${event.delayMs} ms`;
    case 'run-swept':
      return `${head}${paint(output, 'yellow', 'swept')}     ${event.runId}  (no job carried it)`;
    case 'worker-error':
      return `${head}${paint(output, 'red', 'error')}     ${event.runId ?? ''} ${event.error.code}: ${event.error.message}`;
  }
}
