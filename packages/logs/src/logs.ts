import {
  type Agent,
  type Disposable,
  KeelError,
  type RunEvent,
  type RunEventListener,
  rejectUnknownOptions,
  requireOptionsObject,
} from '@keel/core';
import type { TraceIdsOf } from '@keel/telemetry';
import { type Logger, pino } from 'pino';
import { eventLine } from './event-line.js';

/** Options of {@link keelLogs}. */
export interface KeelLogsOptions {
  /**
   * The pino logger lines go to (keel logs through a child of it, bound to `{ component: 'keel' }`). Defaults to
   * `pino()`: JSON lines on standard output, at level `info`.
   */
  logger?: Logger;
  /**
   * Finds the span each event belongs to, for `trace_id`, `span_id` and `trace_flags` on its line: pass
   * `tracing.traceIdsOf` of `@keel/otel` (observe the agent with the tracing first). Defaults to none (no trace ids).
   */
  traceIdsOf?: TraceIdsOf;
  /** Adds correction messages (what the model is told, which may quote its arguments), redacted. Defaults to false. */
  recordContent?: boolean;
}

/** Structured JSON logs of keel run events. */
export interface KeelLogs {
  /** Logs every run of `agent` until the returned handle is disposed. */
  observe(agent: Pick<Agent<unknown>, 'onEvent'>): Disposable;
  /** The listener itself, for `agent({ onEvent })` or `run(input, { onEvent })`. */
  readonly onEvent: RunEventListener;
  /** The child logger keel writes to. */
  readonly logger: Logger;
}

const KNOWN_OPTIONS = ['logger', 'traceIdsOf', 'recordContent'];

/**
 * Logs each run event as one JSON line through pino: `event` (its type), `runId`, `step` when it has one, the trace
 * ids of its span when `traceIdsOf` finds them, and the event's fields. Levels: `debug` for starts of calls and
 * steps, `info` for what went well, `warn` for retries, fallbacks, an opening breaker, failed calls and interrupted
 * or cancelled runs, `error` for failed runs. Text is redacted with `redactSecrets`; answer text is never logged.
 *
 * @example
 *   const tracing = keelTracing();
 *   tracing.observe(assistant);
 *   keelLogs({ traceIdsOf: tracing.traceIdsOf }).observe(assistant);
 */
export function keelLogs(options: KeelLogsOptions = {}): KeelLogs {
  requireOptionsObject(options, 'keelLogs');
  rejectUnknownOptions(options, KNOWN_OPTIONS, 'keelLogs');
  const parent = options.logger ?? pino();
  if (typeof parent?.child !== 'function') invalid('logger must be a pino logger');
  const traceIdsOf = options.traceIdsOf;
  if (traceIdsOf !== undefined && typeof traceIdsOf !== 'function')
    invalid('traceIdsOf must be a function, such as tracing.traceIdsOf');
  const recordContent = options.recordContent ?? false;
  if (typeof recordContent !== 'boolean') invalid('recordContent must be a boolean');
  const logger = parent.child({ component: 'keel' });
  const onEvent = (event: RunEvent): void => {
    const entry = eventLine(event, recordContent);
    if (entry === undefined || !logger.isLevelEnabled(entry.level)) return;
    const ids = traceIdsOf?.(event);
    logger[entry.level](
      {
        event: event.type,
        runId: event.runId,
        ...('step' in event ? { step: event.step } : {}),
        ...(ids === undefined
          ? {}
          : {
              trace_id: ids.traceId,
              span_id: ids.spanId,
              trace_flags: ids.traceFlags.toString(16).padStart(2, '0'),
            }),
        ...entry.fields,
      },
      entry.message,
    );
  };
  return { observe: (agent) => agent.onEvent(onEvent), onEvent, logger };
}

function invalid(message: string): never {
  throw new KeelError('config.invalid', `keelLogs: ${message}`, { data: { where: 'keelLogs' } });
}
