import type { Agent, Disposable, RunEvent, RunEventListener } from '@keel/core';
import {
  createRedactor,
  rejectUnknownOptions,
  requireOptionsObject,
  throwOptionError,
} from '@keel/core/adapter';
import type { TraceIdsOf } from '@keel/telemetry';
import { type Logger, pino } from 'pino';
import { eventLine, type LogLevel } from './event-line.js';
import { redactFields } from './redact-fields.js';

/** Options of {@link keelLogs}. */
export interface KeelLogsOptions {
  /**
   * The pino logger lines go to (keel logs through a child of it, bound to `{ component: 'keel' }`). Defaults to
   * `pino()`: JSON lines on standard output, at level `info`.
   */
  logger?: Logger;
  /** Where the default logger writes its lines, when no `logger` is given. Defaults to standard output. */
  destination?: { write(line: string): void };
  /**
   * Finds the span each event belongs to, for `trace_id`, `span_id` and `trace_flags` on its line: pass
   * `tracing.traceIdsOf` of `@keel/otel` (observe the agent with the tracing first). Defaults to none (no trace ids).
   */
  traceIdsOf?: TraceIdsOf;
  /** Adds correction messages (what the model is told, which may quote its arguments), redacted. Defaults to false. */
  recordContent?: boolean;
  /**
   * Secret values (your API keys, whatever their shape: `gsk_...`, 32 hex digits, a short `sk-...`) removed from
   * every string of every line, on top of the credential patterns of `redactSecrets`: a provider that reports its key
   * as the response model, a tool server that echoes it. Undefined and short entries (under 8 characters) are
   * skipped. Defaults to none.
   */
  secrets?: readonly (string | null | undefined)[];
}

/** Structured JSON logs of keel run events. */
export interface KeelLogs {
  /** Logs every run of `agent` until the returned handle is disposed. */
  observe(agent: Pick<Agent<unknown>, 'onEvent'>): Disposable;
  /** The listener itself, for `agent({ onEvent })` or `run(input, { onEvent })`. */
  readonly onEvent: RunEventListener;
  /** Logs a line of the caller's own (such as a run's result) with the same redaction as event lines. */
  write(level: LogLevel, fields: Record<string, unknown>, message: string): void;
  /** The child logger keel writes to. */
  readonly logger: Logger;
}

const KNOWN_OPTIONS = ['logger', 'destination', 'traceIdsOf', 'recordContent', 'secrets'];

/**
 * Logs each run event as one JSON line through pino: `event` (its type), `runId`, `step` when it has one, the trace
 * ids of its span when `traceIdsOf` finds them, and the event's fields. Levels: `debug` for starts of calls and
 * steps, `info` for what went well, `warn` for retries, fallbacks, an opening breaker, failed calls and interrupted
 * or cancelled runs, `error` for failed runs and checkpoints that could not be saved. Every string of a line goes through
 * `redactSecrets` and credential-named fields are dropped; answer text is never logged.
 *
 * @example
 *   const tracing = keelTracing();
 *   tracing.observe(assistant);
 *   keelLogs({ traceIdsOf: tracing.traceIdsOf }).observe(assistant);
 */
export function keelLogs(options: KeelLogsOptions = {}): KeelLogs {
  requireOptionsObject(options, { where: 'keelLogs' });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'keelLogs' });
  const { destination } = options;
  if (destination !== undefined && typeof destination?.write !== 'function')
    throwOptionError({
      where: 'keelLogs',
      option: 'destination',
      message: 'destination must have a write(line) function',
    });
  if (destination !== undefined && options.logger !== undefined)
    throwOptionError({
      where: 'keelLogs',
      option: 'give',
      message: 'give a logger or a destination, not both (a logger writes where it was made to)',
    });
  const parent = options.logger ?? (destination === undefined ? pino() : pino({}, destination));
  if (typeof parent?.child !== 'function')
    throwOptionError({ where: 'keelLogs', option: 'logger', message: 'logger must be a pino logger' });
  const traceIdsOf = options.traceIdsOf;
  if (traceIdsOf !== undefined && typeof traceIdsOf !== 'function')
    throwOptionError({
      where: 'keelLogs',
      option: 'traceIdsOf',
      message: 'traceIdsOf must be a function, such as tracing.traceIdsOf',
    });
  const recordContent = options.recordContent ?? false;
  if (typeof recordContent !== 'boolean')
    throwOptionError({
      where: 'keelLogs',
      option: 'recordContent',
      message: 'recordContent must be a boolean',
    });
  const secrets = options.secrets ?? [];
  if (!Array.isArray(secrets) || secrets.some((secret) => secret != null && typeof secret !== 'string'))
    throwOptionError({
      where: 'keelLogs',
      option: 'secrets',
      message: 'secrets must be an array of strings (undefined entries are skipped)',
    });
  const redact = createRedactor(secrets).text;
  const logger = parent.child({ component: 'keel' });
  const write = (level: LogLevel, fields: Record<string, unknown>, message: string): void => {
    if (logger.isLevelEnabled(level))
      logger[level](redactFields(fields, redact) as object, redactFields(message, redact) as string);
  };
  const onEvent = (event: RunEvent): void => {
    const entry = eventLine(event, recordContent);
    if (entry === undefined || !logger.isLevelEnabled(entry.level)) return;
    const ids = traceIdsOf?.(event);
    write(
      entry.level,
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
  return { observe: (agent) => agent.onEvent(onEvent), onEvent, write, logger };
}
