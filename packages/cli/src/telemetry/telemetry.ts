// What `keel run`, `keel resume` and `keel worker` export while they run: OTLP/HTTP traces and metrics (--otlp), a
// Prometheus /metrics endpoint (--metrics-port) and JSON log lines in place of the live view (--log json). The OpenTelemetry SDK
// and its OTLP exporters are dependencies of the command line only; the packages it wires rest on @opentelemetry/api
// alone.

import {
  type Agent,
  KeelError,
  type RetryBudget,
  type RunResult,
  redactSecrets,
  type Tool,
} from '@keel/core';
import { type KeelLogs, keelLogs, type LogLevel } from '@keel/logs';
import { type KeelTracing, keelMetrics, keelTracing, tracedTools } from '@keel/otel';
import { keelPrometheus, type MetricsServer } from '@keel/prometheus';
import {
  context,
  type DiagLogger,
  DiagLogLevel,
  diag,
  type Meter,
  propagation,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Registry } from 'prom-client';
import { integerArgument } from '../commands/command-arguments.js';
import type { Output } from '../output/output.js';
import { apiKeyValues } from '../output/redacting-output.js';
import { exitCodeOf, presentResult } from '../output/render.js';
import { otlpExporters } from './otlp-exporters.js';

/** The telemetry flags of `keel run`, `keel resume` and `keel worker`. */
export interface TelemetryFlags {
  /** `--otlp <url>`: the base URL of an OTLP/HTTP receiver (`/v1/traces` and `/v1/metrics` are appended). */
  otlp?: string;
  /** `--metrics-port N`: serves Prometheus' `/metrics` on 127.0.0.1:N while the command lives (0 picks a free port). */
  metricsPort?: number;
  /** `--log json`: JSON log lines on standard output in place of the live view. */
  logJson: boolean;
  /**
   * The command's environment: the values of its API key variables are removed from every label and span
   * (`secrets` of the telemetry packages), and `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` describe the
   * process to the OTLP receiver. Defaults to none (no known secret, `service.name` `keel`).
   */
  environment?: NodeJS.ProcessEnv;
}

/**
 * The flags as the command line gives them (`--otlp`, `--metrics-port`, `--log`), checked before a command reads
 * anything: a bad value fails with `config.invalid`. `environment` is the command's (see {@link TelemetryFlags}).
 */
export function telemetryFlagsOf(
  values: {
    otlp?: string;
    'metrics-port'?: string;
    log?: string;
  },
  environment: NodeJS.ProcessEnv,
): TelemetryFlags {
  if (values.log !== undefined && values.log !== 'json' && values.log !== 'text')
    throw new KeelError('config.invalid', `--log must be json or text, not "${values.log}"`);
  const flags: TelemetryFlags = { logJson: values.log === 'json', environment };
  if (values.otlp !== undefined) flags.otlp = otlpBase(values.otlp);
  const port = values['metrics-port'];
  if (port !== undefined) {
    flags.metricsPort = integerArgument('--metrics-port', port, 0);
    if (flags.metricsPort > 65_535)
      throw new KeelError('config.invalid', '--metrics-port must be at most 65535');
  }
  return flags;
}

/** Telemetry of one command, started before its agents are built and closed after its runs. */
export interface CommandTelemetry {
  /** Whether standard output carries JSON log lines (the live view and the result are lines then). */
  readonly jsonLines: boolean;
  /** The `/metrics` endpoint, when `--metrics-port` was given. */
  readonly metricsServer: MetricsServer | undefined;
  /** The registry `/metrics` serves, when `--metrics-port` was given: a command's own metrics join it. */
  readonly registry: Registry | undefined;
  /** The meter that exports over OTLP, when `--otlp` was given: a command's own metrics go through it. */
  readonly meter: Meter | undefined;
  /** The agent's tools, each running inside its `execute_tool` span's context when tracing is on (`tracedTools`). */
  wrapTools(tools: Tool[]): Tool[];
  /** Traces, measures and logs every run of the agent. */
  observe(agent: Agent<unknown>): void;
  /** Reports how many retries a budget shared by runs still grants (`keel_retry_budget_remaining`). */
  observeRetryBudget(name: string, budget: RetryBudget): void;
  /** Writes a JSON log line of the command's own, redacted as event lines are; nothing without `--log json`. */
  log(level: LogLevel, fields: Record<string, unknown>, message: string): void;
  /**
   * Shows how the run ended and returns the exit code: as the last JSON line in JSON-lines mode, else as the command
   * prints results (`--json` or the report).
   */
  present(result: RunResult<unknown>, json: boolean): number;
  /** Exports what is left (a final OTLP flush) and stops serving metrics. */
  close(): Promise<void>;
}

/**
 * Runs `command` with the telemetry `flags` ask for (none when undefined), then closes it (a final OTLP export, the
 * metrics server), whatever the command's outcome.
 */
export async function withTelemetry(
  flags: TelemetryFlags | undefined,
  output: Output,
  command: (telemetry: CommandTelemetry) => Promise<number>,
): Promise<number> {
  const telemetry = await startTelemetry(flags ?? { logJson: false }, output);
  try {
    return await command(telemetry);
  } finally {
    await telemetry.close();
  }
}

/** How long one OTLP export may take (a request, the SDK's retries included). */
const EXPORT_TIMEOUT_MS = 5_000;

/**
 * How long the last OTLP export, when the command ends, may hold the process: past it the command gives up on the
 * export (a receiver that is down or unreachable), says so on standard error, and exits.
 */
export const FINAL_EXPORT_TIMEOUT_MS = 2_000;

/** Starts what the flags ask for. Bad flags fail with `config.invalid`; a taken port with `network.connection`. */
export async function startTelemetry(flags: TelemetryFlags, output: Output): Promise<CommandTelemetry> {
  const otlp = flags.otlp === undefined ? undefined : otlpBase(flags.otlp);
  const environment = flags.environment ?? {};
  // A provider may report anything as its model name, a tool server anything as a tool name: the values of the
  // environment's API keys never become a label or a span attribute, whatever their shape.
  const secrets = apiKeyValues(environment);
  const prometheus = flags.metricsPort === undefined ? undefined : keelPrometheus({ secrets });
  const metricsServer = await prometheus?.serve({ port: flags.metricsPort });
  const sdk =
    otlp === undefined ? undefined : startSdk(otlp, output, resourceAttributesOf(environment, output));
  const tracing: KeelTracing | undefined =
    sdk === undefined ? undefined : keelTracing({ tracer: sdk.tracerProvider.getTracer('keel'), secrets });
  const meter = sdk?.meterProvider.getMeter('keel');
  const metrics = meter === undefined ? undefined : keelMetrics({ meter, secrets });
  const logs: KeelLogs | undefined = flags.logJson
    ? keelLogs({
        destination: { write: (line) => output.out(line.replace(/\n$/, '')) },
        secrets,
        ...(tracing === undefined ? {} : { traceIdsOf: tracing.traceIdsOf }),
      })
    : undefined;
  return {
    jsonLines: logs !== undefined,
    metricsServer,
    registry: prometheus?.registry,
    meter,
    wrapTools: (tools) => (tracing === undefined ? tools : tracedTools(tracing, tools)),
    observe(agent) {
      // Tracing first: the logs read the span of each event from it.
      tracing?.observe(agent);
      metrics?.observe(agent);
      prometheus?.observe(agent);
      logs?.observe(agent);
    },
    observeRetryBudget(name, budget) {
      metrics?.observeRetryBudget(name, budget);
      prometheus?.observeRetryBudget(name, budget);
    },
    log: (level, fields, message) => logs?.write(level, fields, message),
    present(result, json) {
      if (logs === undefined) return presentResult(result, json, output);
      logs.write(
        'info',
        {
          event: 'run-result',
          runId: result.runId,
          status: result.status,
          stopReason: result.stopReason,
          resumable: result.resumable,
          pending: result.pending ?? [],
          output: result.output ?? null,
          error:
            result.error === undefined ? null : { code: result.error.code, message: result.error.message },
          report: result.report,
        },
        `run ${result.status} (${result.stopReason})`,
      );
      return exitCodeOf(result);
    },
    async close() {
      await Promise.all([sdk?.shutdown(), metricsServer?.close()]);
    },
  };
}

/** The receiver's base URL, checked: http or https, without a trailing slash. Fails with `config.invalid`. */
export function otlpBase(value: string): string {
  if (!URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
    throw new KeelError(
      'config.invalid',
      `--otlp must be an http(s) URL such as http://127.0.0.1:4318, not "${value}"`,
      {
        data: { option: 'otlp' },
      },
    );
  }
  return value.replace(/\/+$/, '');
}

/**
 * The resource attributes that describe the process to the OTLP receiver, from the standard variables:
 * `OTEL_RESOURCE_ATTRIBUTES` (`key=value,key=value`, values percent-encoded), then `OTEL_SERVICE_NAME`, which wins
 * for `service.name`; `service.name` is `keel` when neither sets it. A malformed `OTEL_RESOURCE_ATTRIBUTES` is
 * ignored whole, with a warning on standard error, as the OpenTelemetry specification asks.
 */
export function resourceAttributesOf(
  environment: NodeJS.ProcessEnv,
  output: Pick<Output, 'error'>,
): Record<string, string> {
  const attributes: Record<string, string> = { 'service.name': 'keel' };
  const listed = environment.OTEL_RESOURCE_ATTRIBUTES?.trim();
  if (listed !== undefined && listed !== '') {
    const parsed = parseResourceAttributes(listed);
    if (parsed === undefined) {
      output.error(
        'otlp: OTEL_RESOURCE_ATTRIBUTES is ignored: it must be key=value pairs separated by commas, values percent-encoded',
      );
    } else Object.assign(attributes, parsed);
  }
  const serviceName = environment.OTEL_SERVICE_NAME?.trim();
  if (serviceName !== undefined && serviceName !== '') attributes['service.name'] = serviceName;
  return attributes;
}

/** `key=value,key=value` with percent-encoded values, or undefined when any entry is malformed. */
function parseResourceAttributes(text: string): Record<string, string> | undefined {
  const attributes: Record<string, string> = {};
  for (const entry of text.split(',')) {
    const equals = entry.indexOf('=');
    if (equals <= 0) return undefined;
    const key = entry.slice(0, equals).trim();
    if (key === '') return undefined;
    try {
      attributes[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      return undefined;
    }
  }
  return attributes;
}

/** The OpenTelemetry SDK, exporting over OTLP/HTTP (JSON) to `base`; registered as the process's global. */
function startSdk(base: string, output: Output, resourceAttributes: Record<string, string>) {
  diag.setLogger(warningsTo(output), DiagLogLevel.WARN);
  const resource = resourceFromAttributes(resourceAttributes);
  // The last export gets a deadline shorter than its wait below, so that its retries end before the process would.
  const exporters = otlpExporters(base, EXPORT_TIMEOUT_MS, FINAL_EXPORT_TIMEOUT_MS / 2);
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporters.spans)],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: exporters.metrics,
        exportIntervalMillis: 10_000,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  // Tools that make HTTP calls see the execute_tool span as the active context, and propagate it as traceparent.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  return {
    tracerProvider,
    meterProvider,
    async shutdown() {
      // The run is over and its result printed: an export that fails now is worth a warning, not a failed command,
      // and a receiver that is down must not hold the process: the export gets FINAL_EXPORT_TIMEOUT_MS.
      exporters.ending();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), FINAL_EXPORT_TIMEOUT_MS);
      });
      const exported = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
      const settled = await Promise.race([exported, deadline]);
      clearTimeout(timer);
      if (settled === 'timeout') {
        output.error(
          `otlp: gave up on the last export after ${FINAL_EXPORT_TIMEOUT_MS} ms (is the receiver at ${base} up?)`,
        );
      } else {
        for (const outcome of settled) {
          if (outcome.status === 'rejected')
            output.error(`otlp: the last export failed: ${describe(outcome.reason)}`);
        }
      }
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

/** The SDK's own warnings (an export that failed) on standard error, one line each. */
function warningsTo(output: Output): DiagLogger {
  const write = (message: unknown, ...details: unknown[]) =>
    output.error(`otlp: ${[message, ...details].map(describe).join(' ')}`);
  return {
    error: write,
    warn: write,
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
}

/**
 * A diagnostic as one line: an error's message (the SDK's error handler passes errors as JSON text), text as it is,
 * anything else as JSON; secrets redacted.
 */
function describe(value: unknown): string {
  let text =
    value instanceof Error
      ? value.message
      : typeof value === 'string'
        ? value
        : (JSON.stringify(value) ?? String(value));
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { message?: unknown };
      if (typeof parsed.message === 'string') text = parsed.message;
    } catch {
      // Not JSON after all: shown as it is.
    }
  }
  return redactSecrets(text.split('\n')[0] ?? '');
}
