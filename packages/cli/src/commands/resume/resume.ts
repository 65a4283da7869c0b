import { mergeTrustFlags, type TrustFlags } from '@keel/agent-file';
import {
  type ApprovalAnswer,
  type Clock,
  KeelError,
  type RunStore,
  systemClock,
  type ToolCallDecision,
} from '@keel/core';
import { buildAgent } from '../../build/build-agent.js';
import { type Invocation, loadInvocation } from '../../build/invocation.js';
import { type Output, paint } from '../../output/output.js';
import { liveEvents } from '../../output/render.js';
import { type CommandTelemetry, type TelemetryFlags, withTelemetry } from '../../telemetry/telemetry.js';
import {
  deadHolderOnThisHost,
  heldLease,
  leaseHeldError,
  leaseRenewedError,
  MAX_LEASE_WAIT_MS,
  waitForLease,
  whenLeaseEnds,
} from './lease-wait.js';

/** What `keel resume` is given. */
export interface ResumeCommandOptions {
  runId: string;
  /** The agent file, when this directory has no record of how the run was started. */
  agentFile?: string;
  /** Idempotency keys of calls to approve. */
  approve: string[];
  /** `KEY` or `KEY=reason`: calls to reject, with the reason the model will see. */
  reject: string[];
  /** Idempotency keys of calls that may have run, to run again. */
  execute: string[];
  /** Idempotency keys of calls that may have run, to give up on (the model is told the outcome is unknown). */
  abandon: string[];
  /** `--allow-key-host` values, added to those the run was started with. Defaults to none. */
  allowedKeyHosts?: string[];
  /** `--allow-host`, `--allow-programs` and `--allow-env`, added to those the run was started with. Defaults to none. */
  trust?: TrustFlags;
  /**
   * When another process holds the run's lease: wait for it to end (at most {@link MAX_LEASE_WAIT_MS}, printing
   * progress on stderr), then resume. Without it, `keel resume` says when the lease ends and exits. Defaults to false.
   */
  wait?: boolean;
  json: boolean;
  /** `--otlp`, `--metrics-port` and `--log json`, as `keel run` takes them. Defaults to none of them. */
  telemetry?: TelemetryFlags;
  workingDirectory: string;
  environment: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** The agent's clock, and the one `wait` waits on. Defaults to the system clock. */
  clock?: Clock;
}

/**
 * `keel resume <run-id>`: continues a run from its last checkpoint, with the decisions it waits for. An id the store
 * does not hold fails with `store.not_found`. A run whose lease a process of this host holds that is gone (killed,
 * crashed) is taken over at once; a run another process holds (alive, or on another host: its lease runs out by
 * itself if it died) is refused with when its lease ends, or waited for with `--wait`.
 */
export async function resumeCommand(
  options: ResumeCommandOptions,
  store: RunStore,
  output: Output,
): Promise<number> {
  // An id the store does not know is that, whatever this directory remembers of how runs were started.
  if ((await store.loadRun(options.runId)) === undefined) {
    throw new KeelError('store.not_found', `No run ${options.runId} in this store`, {
      data: { runId: options.runId },
      guidance:
        'Check the id (keel runs list shows the runs), and --store when the run is in another store (postgres://... or a SQLite file)',
    });
  }
  const invocation = await loadInvocation(options.workingDirectory, options.runId, options.agentFile);
  const { approvals, decisions } = answersOf(options);
  return withTelemetry(options.telemetry, output, (telemetry) =>
    resumeWithTelemetry(options, invocation, { approvals, decisions }, telemetry, store, output),
  );
}

async function resumeWithTelemetry(
  options: ResumeCommandOptions,
  invocation: Invocation,
  answers: { approvals: Record<string, ApprovalAnswer>; decisions: Record<string, ToolCallDecision> },
  telemetry: CommandTelemetry,
  store: RunStore,
  output: Output,
): Promise<number> {
  const clock = options.clock ?? systemClock;
  const built = await buildAgent({
    agentFile: invocation.agentFile,
    workingDirectory: options.workingDirectory,
    environment: options.environment,
    store,
    allowedKeyHosts: [...(invocation.allowedKeyHosts ?? []), ...(options.allowedKeyHosts ?? [])],
    trust: mergeTrustFlags(invocation.trust, options.trust),
    clock,
    wrapTools: telemetry.wrapTools,
    ...(invocation.faults === undefined ? {} : { faults: invocation.faults }),
    ...(invocation.seed === undefined ? {} : { seed: invocation.seed }),
  });
  try {
    telemetry.observe(built.agent);
    const quiet = options.json || telemetry.jsonLines;
    if (!quiet) {
      output.out(`${paint(output, 'bold', `keel resume ${built.file.name}`)}  run ${options.runId}`);
      if (telemetry.metricsServer !== undefined)
        output.out(paint(output, 'grey', `metrics at ${telemetry.metricsServer.url}`));
      output.out('');
    }
    const deadlineMs = clock.now() + MAX_LEASE_WAIT_MS;
    let waitedFor: number | undefined;
    const freed = new Set<string>();
    for (;;) {
      try {
        const result = await built.agent.resume(options.runId, {
          ...answers,
          signal: options.signal,
          ...liveEvents(quiet, output),
        });
        return telemetry.present(result, options.json);
      } catch (error) {
        const lease = heldLease(error);
        if (lease === undefined) throw error;
        // The holder was a process of this host that is gone (SIGKILL, a crash): its lease is freed at once.
        const deadPid = deadHolderOnThisHost(lease.holder);
        if (deadPid !== undefined && lease.holder !== null && !freed.has(lease.holder)) {
          freed.add(lease.holder);
          await store.releaseLease(options.runId, lease.holder);
          output.error(
            `run ${options.runId}: its lease holder (process ${deadPid} of this host) is gone; taking the run over`,
          );
          continue;
        }
        const nowMs = clock.now();
        if (waitedFor !== undefined && lease.expiresAtMs > waitedFor)
          throw leaseRenewedError(options.runId, lease, nowMs, error);
        if (options.wait !== true) throw leaseHeldError(options.runId, lease, nowMs, error);
        if (lease.expiresAtMs > deadlineMs) {
          const limit = `, later than --wait waits (${MAX_LEASE_WAIT_MS / 1_000} s)`;
          throw leaseHeldError(options.runId, lease, nowMs, error, limit);
        }
        output.error(
          `waiting for run ${options.runId}: its lease (owner ${lease.holder ?? 'unknown'}) ends ${whenLeaseEnds(lease.expiresAtMs, nowMs)}`,
        );
        await waitForLease(lease, clock, options.signal, (line) => output.error(line));
        waitedFor = lease.expiresAtMs;
      }
    }
  } finally {
    await built.close();
  }
}

/** The approvals and decisions of `--approve`, `--reject`, `--execute` and `--abandon`. */
function answersOf(options: Pick<ResumeCommandOptions, 'approve' | 'reject' | 'execute' | 'abandon'>): {
  approvals: Record<string, ApprovalAnswer>;
  decisions: Record<string, ToolCallDecision>;
} {
  const approvals: Record<string, ApprovalAnswer> = {};
  for (const key of options.approve) approvals[key] = { approved: true };
  for (const entry of options.reject) {
    const separator = entry.indexOf('=');
    const key = separator === -1 ? entry : entry.slice(0, separator);
    const reason = separator === -1 ? undefined : entry.slice(separator + 1);
    if (key in approvals) throw new KeelError('config.invalid', `Call ${key} is both approved and rejected`);
    approvals[key] = reason === undefined ? { approved: false } : { approved: false, reason };
  }
  const decisions: Record<string, ToolCallDecision> = {};
  for (const key of options.execute) decisions[key] = 'execute';
  for (const key of options.abandon) {
    if (key in decisions) throw new KeelError('config.invalid', `Call ${key} is both executed and abandoned`);
    decisions[key] = 'abandon';
  }
  return { approvals, decisions };
}

/**
 * `keel resume <run-id> --redis URL`: a run of a fleet. The answers are checked against what the run waits for, then
 * go through the queue: a worker (`keel worker`) resumes the run with them. Prints where to follow it.
 */
export async function answerThroughQueue(
  options: ResumeCommandOptions,
  store: RunStore,
  redis: string,
  output: Output,
): Promise<number> {
  const { approvals, decisions } = answersOf(options);
  const { runQueue } = await import('@keel/worker');
  const queue = runQueue({ store, redis, ...(options.clock === undefined ? {} : { clock: options.clock }) });
  try {
    await queue.answer(options.runId, { approvals, decisions });
  } finally {
    await queue.close();
  }
  if (options.json) output.out(JSON.stringify({ runId: options.runId, status: 'enqueued' }, null, 2));
  else
    output.out(
      `run ${options.runId}: answers sent to the fleet's workers (follow it with: keel runs show ${options.runId})`,
    );
  return 0;
}
