import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { RunEventListener } from '../spec/run-events.js';
import type { RunRecord } from '../spec/run-store.js';
import { DurableRun } from './durability/durable-run.js';
import { checkpointOf } from './durability/durable-writes.js';
import { MessageLogCursor, type StateSnapshot } from './durability/message-log-cursor.js';
import { applyAnswers, checkAnswers, reconcile } from './durability/resume-decisions.js';
import { migrateRunState } from './durability/run-state-migrations.js';
import { storeCallsOf, withStoreRetries, withStoreTimeout } from './durability/store-calls.js';
import { checkOptions, checkRunId, driveRun, type RunResult } from './loop/run.js';
import { type QueuedRunState, readQueuedState } from './queued-run.js';
import type { AgentRuntime } from './run/agent-runtime.js';
import { RunAbort, type RunRegistry } from './run/cancellation.js';
import type { ForwardedAnswers } from './run/child-runs.js';
import type { DurabilitySettings } from './run/durability.js';
import type { ApprovalAnswer, ToolCallDecision } from './run/pending-decision.js';
import { createRunState, type RunState } from './run/run-state.js';
import { initialMessages } from './start-run.js';

/** Options of `agent.resume(runId, options)`. */
export interface ResumeOptions {
  /**
   * Answers to the approvals the run waits for, by idempotency key: `{ approved: true }` runs the call, `{ approved:
   * false, reason }` gives the model a `tool.rejected` error carrying the reason. Defaults to none (a call still
   * awaiting approval interrupts the run again).
   */
  approvals?: Record<string, ApprovalAnswer>;
  /**
   * Decisions about calls that may or may not have run (pending decisions of kind `uncertain`), by idempotency key:
   * `execute` runs the call again (its effect may happen twice), `abandon` gives the model a `tool.failed` error with
   * `data.outcome: 'unknown'`. Defaults to none (the run is interrupted again while any is undecided).
   */
  decisions?: Record<string, ToolCallDecision>;
  /** Cancels the resumed run when it aborts. Defaults to none. */
  signal?: AbortSignal;
  /** Receives this run's events. Defaults to none. */
  onEvent?: RunEventListener;
  /** Receives the answer's text as it streams (see `RunOptions.onTextDelta`). Defaults to none. */
  onTextDelta?: (delta: string) => void;
  /**
   * Pauses the run when it aborts, as a worker that shuts down does: calls already running finish and are saved, no
   * further call starts (a model call in flight is abandoned, to be asked again), the run's state is saved, its lease
   * freed, and it ends `interrupted` with stop reason `paused`, for any process to resume. Defaults to none.
   */
  pauseSignal?: AbortSignal;
}

const RESUME_OPTIONS = ['approvals', 'decisions', 'signal', 'onEvent', 'onTextDelta', 'pauseSignal'];

/**
 * Resumes a stored run from its last checkpoint (see `Agent.resume`). Everything that can be refused is refused
 * before anything runs: `config.invalid` (no store, bad options, a key that is not pending, a state from a newer
 * keel), `store.not_found`, `store.conflict` (another live process holds the run), `store.unavailable`.
 */
export async function resumeRun<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  runId: string,
  options: ResumeOptions = {},
): Promise<RunResult<Output>> {
  checkRunId(runId, 'resume');
  checkOptions(options, RESUME_OPTIONS, 'resume');
  checkAnswers(options.approvals, options.decisions);
  const { pauseSignal } = options;
  if (pauseSignal !== undefined && !(pauseSignal instanceof AbortSignal)) {
    throw new KeelError('config.invalid', 'resume: pauseSignal must be an AbortSignal', {
      data: { where: 'resume' },
    });
  }
  const durability = runtime.durability;
  if (durability === undefined) {
    throw new KeelError(
      'config.invalid',
      'resume: the agent has no store; pass store to agent() to resume runs',
      {
        data: { where: 'resume' },
      },
    );
  }
  const abort = new RunAbort(runId, runtime.clock);
  try {
    registry.register(abort);
  } catch (error) {
    throw new KeelError('store.conflict', `Run ${runId} is already running in this process`, {
      data: { runId },
      cause: error,
    });
  }
  let prepared: Prepared | RunResult<Output>;
  try {
    prepared = await prepare<Output>(runtime, durability, runId, abort, options);
  } catch (error) {
    registry.unregister(abort);
    abort.dispose();
    throw error;
  }
  if ('resumable' in prepared) {
    registry.unregister(abort);
    abort.dispose();
    return prepared;
  }
  const { durable } = prepared;
  durable.pausable = pauseSignal !== undefined;
  const pause = () => durable.pause();
  if (pauseSignal?.aborted === true) pause();
  pauseSignal?.addEventListener('abort', pause, { once: true });
  try {
    return await driveRun<Output>(runtime, registry, agentRuns, prepared.state, options, prepared.fresh, {
      abort,
      durable,
      ...(prepared.childAnswers === undefined ? {} : { childAnswers: prepared.childAnswers }),
    });
  } finally {
    pauseSignal?.removeEventListener('abort', pause);
  }
}

/** A run ready to be driven: restored from its checkpoint, or (`fresh`) a queued run about to start. */
interface Prepared {
  state: RunState;
  durable: DurableRun;
  fresh: boolean;
  childAnswers?: ForwardedAnswers;
}

/** Loads, checks, leases and reconciles the run; an ended run resolves with its stored result instead. */
async function prepare<Output>(
  runtime: AgentRuntime,
  durability: DurabilitySettings,
  runId: string,
  abort: RunAbort,
  options: ResumeOptions,
): Promise<Prepared | RunResult<Output>> {
  const { clock } = runtime;
  const { store, owner, leaseTtlMs } = durability;
  const retry = storeCallsOf(durability, clock);
  const record = await withStoreRetries(() => store.loadRun(runId), retry);
  if (record === undefined) {
    throw new KeelError('store.not_found', `Run ${runId} is not in the store`, { data: { runId } });
  }
  if (record.agentName !== runtime.name) {
    throw new KeelError(
      'config.invalid',
      `resume: run ${runId} belongs to agent "${record.agentName}", not "${runtime.name}"; resume it with that agent`,
      { data: { where: 'resume', runId } },
    );
  }
  const queued = readQueuedState(record.state);
  if (queued !== undefined) return startQueued<Output>(runtime, durability, record, queued, options);
  const state = migrateRunState(record.state, runId);
  // The messages the store's log holds, as loaded: the run's first write appends after them (or rewrites from the
  // first one that changed).
  const loggedMessages = state.messages.slice(0, record.messageCount ?? 0);
  if (hasEnded(record, state)) {
    if (hasAnswers(options)) {
      throw new KeelError(
        'config.invalid',
        `resume: run ${runId} has already ended (${record.status}); nothing is pending`,
        {
          data: { where: 'resume', runId },
        },
      );
    }
    return storedResult<Output>(record, state);
  }
  const leasedAtMs = clock.now();
  await withStoreRetries(() => store.acquireLease(runId, owner, leaseTtlMs, leasedAtMs), retry);
  try {
    const ledger = await withStoreRetries(() => store.ledger(runId), retry);
    // Whether a call may run again depends on its tool, which a tool source (an MCP server) has to list first.
    if (runtime.toolCatalog?.stale) await runtime.toolCatalog.update();
    const reconciled = reconcile(runtime, state, ledger);
    const childAnswers: ForwardedAnswers = {};
    const abandoned = applyAnswers(state, reconciled, options.approvals, options.decisions, childAnswers);
    for (const { call, result } of abandoned) {
      if (!reconciled.startedKeys.has(call.idempotencyKey)) continue;
      await withStoreRetries(
        () =>
          store.recordToolCompleted(runId, call.idempotencyKey, result as unknown as JsonValue, clock.now()),
        retry,
      );
      reconciled.startedKeys.delete(call.idempotencyKey);
    }
    reopen(state, clock.now());
    if (record.cancellation !== undefined) abort.cancel(record.cancellation.reason);
    return {
      state,
      durable: new DurableRun(
        durability,
        runId,
        record.version,
        clock,
        leasedAtMs,
        reconciled.startedKeys,
        loggedMessages,
        record.journalEnd,
      ),
      fresh: false,
      childAnswers,
    };
  } catch (error) {
    await withStoreTimeout(() => store.releaseLease(runId, owner), durability.storeTimeoutMs, clock).catch(
      () => undefined,
    );
    throw error;
  }
}

/**
 * Starts a queued run (see `queuedRun`): builds its state from the stored input (the agent's instructions first; the
 * run timeout counts from now), takes the lease and writes the state as the run's first checkpoint. A run cancelled
 * while it was queued resolves as `cancelled`, running nothing.
 */
async function startQueued<Output>(
  runtime: AgentRuntime,
  durability: DurabilitySettings,
  record: RunRecord,
  queued: QueuedRunState,
  options: ResumeOptions,
): Promise<Prepared | RunResult<Output>> {
  const { clock } = runtime;
  const { store, owner, leaseTtlMs } = durability;
  const { runId } = record;
  if (hasAnswers(options)) {
    throw new KeelError('config.invalid', `resume: run ${runId} has not started yet; nothing is pending`, {
      data: { where: 'resume', runId },
    });
  }
  const nowMs = clock.now();
  const state = createRunState({
    runId,
    agentName: record.agentName,
    messages: initialMessages(runtime, queued.input),
    startedAtMs: record.status === 'queued' ? nowMs : queued.submittedAtMs,
    deadlineAtMs: nowMs + runtime.limits.timeoutMs,
  });
  if (typeof queued.tenant === 'string') state.tenant = queued.tenant;
  if (typeof queued.priority === 'number' && queued.priority !== 0) state.priority = queued.priority;
  if (record.status !== 'queued') return storedResult<Output>(record, state);
  const retry = storeCallsOf(durability, clock);
  await withStoreRetries(() => store.acquireLease(runId, owner, leaseTtlMs, nowMs), retry);
  state.checkpointedAtMs = nowMs;
  // With a message log, the input goes to it now: the run's next checkpoint writes only what it added.
  const snapshot: StateSnapshot =
    store.messageLog === true ? new MessageLogCursor().snapshot(state) : { text: JSON.stringify(state) };
  const checkpoint = checkpointOf(
    { expectedVersion: record.version, owner, status: 'running', nowMs },
    snapshot,
  );
  try {
    const version = await withStoreRetries(() => store.saveCheckpoint(runId, checkpoint), retry);
    const logged = snapshot.log?.messages;
    return {
      state,
      durable: new DurableRun(durability, runId, version, clock, nowMs, [], logged),
      fresh: true,
    };
  } catch (error) {
    await withStoreTimeout(() => store.releaseLease(runId, owner), durability.storeTimeoutMs, clock).catch(
      () => undefined,
    );
    // Cancelled between the load and the first checkpoint: the store says so, and so does the result.
    const current = await withStoreTimeout(
      () => store.loadRun(runId),
      durability.storeTimeoutMs,
      clock,
    ).catch(() => undefined);
    if (current?.status === 'cancelled') return storedResult<Output>(current, state);
    throw error;
  }
}

/**
 * Makes an interrupted or crashed run's state running again. Time since its last checkpoint (waiting for a human, or
 * for the process to come back) does not count against the run timeout: the deadline moves by as much.
 */
function reopen(state: RunState, nowMs: number): void {
  state.status = 'running';
  state.pendingDecisions = [];
  delete state.stopReason;
  delete state.stopDetail;
  delete state.error;
  delete state.endedAtMs;
  const pausedMs = Math.max(0, nowMs - (state.checkpointedAtMs ?? nowMs));
  state.deadlineAtMs += pausedMs;
}

/**
 * Whether a stored run is over: only a `running` (its process may have died) or `interrupted` run goes on, and only
 * while its state has not reached its end (a state that says it ended is believed over a record that lags behind).
 */
function hasEnded(record: RunRecord, state: RunState): boolean {
  return (record.status !== 'running' && record.status !== 'interrupted') || state.phase === 'ended';
}

function hasAnswers(options: ResumeOptions): boolean {
  return Object.keys(options.approvals ?? {}).length > 0 || Object.keys(options.decisions ?? {}).length > 0;
}

/** The result of a run that has already ended, rebuilt from its record without calling anything. */
export function storedResult<Output>(record: RunRecord, state: RunState): RunResult<Output> {
  // Cancelled from another process while it waited: the record says so, the state still says interrupted.
  if (record.status === 'cancelled' && state.status !== 'cancelled') {
    const reason = record.cancellation?.reason;
    const error = new KeelError(
      'run.cancelled',
      reason === undefined || reason === ''
        ? `Run ${record.runId} was cancelled`
        : `Run ${record.runId} was cancelled: ${reason}`,
      { data: { runId: record.runId } },
    );
    return {
      runId: record.runId,
      status: 'cancelled',
      stopReason: 'cancelled',
      output: undefined,
      messages: state.messages,
      usage: { ...state.usage },
      error,
      report: state.report,
      state,
      resumable: false,
    };
  }
  return {
    runId: record.runId,
    status: state.status === 'running' ? 'failed' : state.status,
    stopReason: state.stopReason ?? 'internal_error',
    ...(state.stopDetail === undefined ? {} : { stopDetail: state.stopDetail }),
    output: state.output as Output | undefined,
    messages: state.messages,
    usage: { ...state.usage },
    ...(state.error === undefined ? {} : { error: KeelError.fromJSON(state.error) }),
    report: state.report,
    state,
    resumable: false,
  };
}
