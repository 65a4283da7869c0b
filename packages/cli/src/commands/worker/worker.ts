import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllowedHost, type TrustFlags, trustFlagsOf } from '@keel/agent-file';
import { type Clock, KeelError, type RunStore } from '@keel/core';
import { runWorker } from '@keel/worker';
import { type BuiltAgent, buildAgent } from '../../build/build-agent.js';
import { type FleetPolicies, fleetPolicies } from '../../build/fleet-policies.js';
import type { Output } from '../../output/output.js';
import { openStore } from '../../store.js';
import {
  type CommandTelemetry,
  type TelemetryFlags,
  telemetryFlagsOf,
  withTelemetry,
} from '../../telemetry/telemetry.js';
import { integerArgument, parsedArguments, redisUrlOf } from '../command-arguments.js';
import { checkRedis } from './redis-check.js';
import { workerMetrics } from './worker-metrics.js';
import { WORKER_OPTIONS, WORKER_USAGE } from './worker-options.js';
import { type WorkerPrinter, workerPrinter } from './worker-output.js';

/** What `keel worker` runs with, besides its arguments. */
export interface WorkerContext {
  output: Output;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  signal: AbortSignal;
  clock: Clock;
}

/** `keel worker ...`: parses the arguments, then {@link workerCommand}. */
export async function workerCli(argv: readonly string[], context: WorkerContext): Promise<number> {
  const { values, positionals } = parsedArguments('worker', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...WORKER_OPTIONS, help: { type: 'boolean', short: 'h' } },
    }),
  );
  if (values.help === true) {
    context.output.out(WORKER_USAGE);
    return 0;
  }
  const options: WorkerCommandOptions = {
    files: positionals,
    redis: redisUrlOf(values.redis, context.environment),
    allowedKeyHosts: (values['allow-key-host'] ?? []).map(parseAllowedHost),
    trust: trustFlagsOf(values),
    json: values.json === true,
    telemetry: telemetryFlagsOf(values, context.environment),
    workingDirectory: context.workingDirectory,
    environment: context.environment,
    signal: context.signal,
    clock: context.clock,
  };
  if (values.concurrency !== undefined)
    options.concurrency = integerArgument('--concurrency', values.concurrency, 1);
  if (values['lease-ttl-ms'] !== undefined)
    options.leaseTtlMs = integerArgument('--lease-ttl-ms', values['lease-ttl-ms'], 200);
  if (values['tenant-limit'] !== undefined) options.tenantLimits = tenantLimitsOf(values['tenant-limit']);
  if (values['policy-state'] !== undefined) options.policyState = policyStateOf(values['policy-state']);
  if (values.faults !== undefined) options.faults = values.faults;
  if (values.seed !== undefined) options.seed = integerArgument('--seed', values.seed, 0);
  const store = openStore(values.store, context.workingDirectory);
  try {
    return await workerCommand(options, store, context.output);
  } finally {
    await store.close();
  }
}

/** What `keel worker` is given. */
export interface WorkerCommandOptions {
  files: string[];
  /** Redis of the fleet (`--redis`). */
  redis: string;
  /** Runs at once per agent (`--concurrency`). Defaults to 1. */
  concurrency?: number;
  /** The agents' lease TTL and the jobs' lock (`--lease-ttl-ms`): how soon a dead worker's runs are taken again. */
  leaseTtlMs?: number;
  /**
   * Most runs of one tenant at once across the fleet (`--tenant-limit N`, `--tenant-limit TENANT=N`): `@keel/worker`'s
   * `tenants`, its places leased for `leaseTtlMs`. Defaults to no limit.
   */
  tenantLimits?: { maxConcurrentRuns: number; perTenant: Record<string, number> };
  /**
   * Where the agents' breakers and retry budget live (`--policy-state`): `shared` through the fleet's Redis, each
   * worker going on with its own state while Redis is unreachable; `closed`, shared, calls refused while Redis is
   * unreachable; `local`, each worker's own. Defaults to `shared`.
   */
  policyState?: PolicyState;
  faults?: string;
  seed?: number;
  allowedKeyHosts: string[];
  /** `--allow-host`, `--allow-programs` and `--allow-env`: what the agent files may do. Defaults to none. */
  trust?: TrustFlags;
  json: boolean;
  /**
   * `--metrics-port`, `--otlp` and `--log json`: for the worker's whole life, every run it executes and its own
   * events. Defaults to none of them.
   */
  telemetry?: TelemetryFlags;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  /** Aborts on Ctrl-C: the worker shuts down gracefully (as on SIGTERM). */
  signal: AbortSignal;
  clock: Clock;
}

/**
 * `keel worker <agent.yaml>...`: a worker of a fleet. Takes the runs submitted for its agent files' agents, runs them
 * durably on the shared store and prints a line per run taken, started, resumed, finished or handed back (`--json`:
 * one JSON object a line; `--log json`: JSON log lines of its runs' events and its own). On SIGTERM or Ctrl-C it takes
 * no more runs, lets the running ones reach a checkpoint with no tool call running, hands them back to the queue,
 * exports what telemetry is left and exits 0.
 */
export async function workerCommand(
  options: WorkerCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  if (options.files.length === 0) {
    throw new KeelError(
      'config.invalid',
      'usage: keel worker <agent.yaml>... --store postgres://... --redis redis://...; run keel worker --help',
    );
  }
  // Telemetry lives as long as the worker: started before the agents are built, closed (a last OTLP export, the
  // metrics server) after the runs in progress went back to the queue.
  return withTelemetry(options.telemetry, output, (telemetry) =>
    runAsWorker(options, telemetry, store, output),
  );
}

async function runAsWorker(
  options: WorkerCommandOptions,
  telemetry: CommandTelemetry,
  store: RunStore,
  output: Output,
): Promise<number> {
  const mode = telemetry.jsonLines ? 'log' : options.json ? 'json' : 'text';
  const printer = workerPrinter(mode, output, telemetry.log);
  const leaseTtlMs = options.leaseTtlMs ?? 30_000;
  const built: BuiltAgent[] = [];
  // SIGTERM (or Ctrl-C) is heard from the start: before the worker is ready it stops the start and exits 0, rather
  // than kill the process by the signal.
  const stop = new AbortController();
  const onStop = () => stop.abort();
  process.on('SIGTERM', onStop);
  options.signal.addEventListener('abort', onStop, { once: true });
  if (options.signal.aborted) onStop();
  const stopped = new Promise<'stopped'>((resolve) => {
    stop.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
  });
  /** Runs `step` unless the worker is stopped before or while it runs (then `'stopped'`, the step left unheard). */
  const unlessStopped = async <T>(step: () => Promise<T>): Promise<T | 'stopped'> => {
    if (stop.signal.aborted) return 'stopped';
    const running = step();
    running.catch(() => undefined);
    return Promise.race([stopped, running]);
  };
  const policies = policiesOf(options, printer);
  try {
    for (const file of options.files) {
      const entry = await buildAgent({
        agentFile: resolve(options.workingDirectory, file),
        workingDirectory: options.workingDirectory,
        environment: options.environment,
        store,
        allowedKeyHosts: options.allowedKeyHosts,
        ...(options.trust === undefined ? {} : { trust: options.trust }),
        clock: options.clock,
        durability: { leaseTtlMs },
        wrapTools: telemetry.wrapTools,
        ...(policies === undefined ? {} : { policies: (name: string) => policies.forAgent(name) }),
        ...(options.faults === undefined ? {} : { faults: options.faults }),
        ...(options.seed === undefined ? {} : { seed: options.seed }),
      });
      built.push(entry);
      telemetry.observe(entry.agent);
    }
    // The agent files are checked first (a mistake there is exit 2), then Redis (exit 1). Runs start once the shared
    // state is read: under `closed`, a breaker refuses calls until then.
    if ((await unlessStopped(() => checkRedis(options.redis, undefined, stop.signal))) === 'stopped') {
      printer.stopped();
      return 0;
    }
    if (policies !== undefined && (await unlessStopped(() => policies.state.ready())) === 'stopped') {
      printer.stopped();
      return 0;
    }
    if (policies !== undefined) telemetry.observeRetryBudget('fleet', policies.budget);
    const agents = built.map((entry) => entry.file.name);
    const measure = workerMetrics(telemetry, agents);
    const worker = runWorker({
      agents: built.map((entry) => entry.agent),
      store,
      redis: options.redis,
      concurrency: options.concurrency ?? 1,
      lockDurationMs: leaseTtlMs,
      stalledIntervalMs: Math.max(100, Math.floor(leaseTtlMs / 2)),
      sweepIntervalMs: Math.max(1_000, leaseTtlMs * 2),
      retryDelayMs: Math.min(5_000, leaseTtlMs),
      ...(options.tenantLimits === undefined
        ? {}
        : {
            tenants: {
              ...options.tenantLimits,
              leaseMs: leaseTtlMs,
              retryDelayMs: Math.min(1_000, leaseTtlMs),
            },
          }),
      onEvent: (event) => {
        measure?.(event);
        printer.event(event);
      },
    });
    printer.ready({
      agents,
      concurrency: options.concurrency ?? 1,
      pid: process.pid,
      ...(telemetry.metricsServer === undefined ? {} : { metricsUrl: telemetry.metricsServer.url }),
    });
    await stopped;
    printer.stopping();
    await worker.close();
    printer.stopped();
    return 0;
  } finally {
    process.removeListener('SIGTERM', onStop);
    options.signal.removeEventListener('abort', onStop);
    for (const entry of built) await entry.close();
    await policies?.close();
  }
}

/** Where a worker's breakers and retry budget live (`--policy-state`). */
export type PolicyState = 'shared' | 'closed' | 'local';

function policyStateOf(value: string): PolicyState {
  if (value === 'shared' || value === 'closed' || value === 'local') return value;
  throw new KeelError('config.invalid', `--policy-state must be shared, closed or local, not "${value}"`);
}

/** The fleet's shared policy state, unless `local`; printed when Redis is lost and when it returns. */
function policiesOf(options: WorkerCommandOptions, printer: WorkerPrinter): FleetPolicies | undefined {
  const policyState = options.policyState ?? 'shared';
  if (policyState === 'local') return undefined;
  const policies = fleetPolicies({
    url: options.redis,
    onUnavailable: policyState === 'closed' ? 'closed' : 'local',
  });
  policies.state.onUnavailable(({ atMs, error }) =>
    printer.policyStateLost(atMs, policyState, { code: error.code, message: error.message }),
  );
  policies.state.onRecovered(({ atMs, unavailableForMs }) => printer.policyStateBack(atMs, unavailableForMs));
  return policies;
}

/**
 * `--tenant-limit` values: `N` for every tenant, `TENANT=N` for one; a tenant named with no `N` for the others has no
 * limit but its own. Throws `config.invalid` for anything else.
 */
function tenantLimitsOf(values: readonly string[]): {
  maxConcurrentRuns: number;
  perTenant: Record<string, number>;
} {
  let maxConcurrentRuns = 2_147_483_647;
  const perTenant: Record<string, number> = {};
  for (const value of values) {
    const match = /^(?:([A-Za-z0-9._:@-]{1,64})=)?(\d+)$/.exec(value);
    const limit = match === null ? 0 : Number(match[2]);
    if (match === null || !(limit >= 1)) {
      throw new KeelError(
        'config.invalid',
        `--tenant-limit must be N or TENANT=N with N an integer of at least 1, not "${value}"`,
      );
    }
    if (match[1] === undefined) maxConcurrentRuns = limit;
    else perTenant[match[1]] = limit;
  }
  return { maxConcurrentRuns, perTenant };
}
