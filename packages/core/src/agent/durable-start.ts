import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { Clock } from '../policies/clock.js';
import { DurableRun } from './durability/durable-run.js';
import { holdsSnapshot } from './durability/durable-writes.js';
import { MessageLogCursor, messageLogWriteOf, type StateSnapshot } from './durability/message-log-cursor.js';
import { storeCallsOf, toStoreError, withStoreRetries, withStoreTimeout } from './durability/store-calls.js';
import { driveRun, type RunOptions, type RunResult, resultOf } from './loop/run.js';
import type { AgentRuntime } from './run/agent-runtime.js';
import { RunAbort, type RunRegistry } from './run/cancellation.js';
import { parentRunIn } from './run/child-runs.js';
import type { DurabilitySettings } from './run/durability.js';
import { countError } from './run/report.js';
import { endRun, RUN_STATE_SCHEMA_VERSION, type RunState } from './run/run-state.js';
import { isSessionConflict } from './run/session-state.js';

/**
 * Starts a durable run: creates its record in the store (a run id already stored is `config.invalid`, like one in
 * progress; a run on a session claims the session with it, and a refused claim is thrown as the store's
 * `store.conflict`), takes its lease, then drives it with a checkpoint after every transition. A store that cannot be
 * reached even after retries stops the run before anything ran: `failed` (`store.unavailable`) when not even its
 * record could be created, else `interrupted` (`store_unavailable`), to be resumed once the store is back.
 */
export async function startDurableRun<Output>(
  runtime: AgentRuntime,
  durability: DurabilitySettings,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  state: RunState,
  options: RunOptions,
): Promise<RunResult<Output>> {
  const { clock } = runtime;
  const { store, owner, leaseTtlMs } = durability;
  const runId = state.runId;
  const abort = new RunAbort(runId, clock);
  // Registered first, so that two runs with one id in this process never both reach the store.
  registry.register(abort);
  const createsInCommit = store.createsInCommit === true && store.commitStep !== undefined;
  if (createsInCommit && parentRunIn(options) !== undefined && state.session === undefined) {
    // A child run is created with its first write, one transaction: until then it exists only in this process,
    // like the parent's call that starts it (a crash there runs the call again, and the child from its start).
    state.checkpointedAtMs = state.startedAtMs;
    const child = new DurableRun(durability, runId, 0, clock, clock.now());
    child.createdByFirstWrite({ agentName: state.agentName, createdAtMs: state.startedAtMs });
    return driveRun<Output>(runtime, registry, agentRuns, state, options, true, { abort, durable: child });
  }
  let durable: DurableRun;
  let created = false;
  try {
    state.checkpointedAtMs = state.startedAtMs;
    // With a message log, the run's first messages go to it: its first checkpoint writes only those added since.
    const snapshot: StateSnapshot =
      store.messageLog === true ? new MessageLogCursor().snapshot(state) : { text: JSON.stringify(state) };
    const { text, log } = snapshot;
    const retry = storeCallsOf(durability, clock);
    // The run is created leased to this process, in one write (a store that ignores `lease` is leased after).
    const leasedAtMs = clock.now();
    const { version, leased } = await withStoreRetries(
      () =>
        store
          .createRun({
            runId,
            agentName: state.agentName,
            status: 'running',
            schemaVersion: RUN_STATE_SCHEMA_VERSION,
            state: JSON.parse(text) as JsonValue,
            createdAtMs: state.startedAtMs,
            lease: { owner, expiresAtMs: leasedAtMs + leaseTtlMs },
            ...(log === undefined ? {} : { messages: messageLogWriteOf(log) }),
            ...(state.session === undefined
              ? {}
              : {
                  session: { sessionId: state.session.sessionId, expectedVersion: state.session.baseVersion },
                }),
          })
          .then((record) => ({ version: record.version, leased: record.lease?.owner === owner })),
      retry,
    ).catch(async (error: unknown) => ({
      version: await createdAfterAll(durability, runId, snapshot, error, clock),
      leased: false,
    }));
    created = true;
    if (!leased)
      await withStoreRetries(() => store.acquireLease(runId, owner, leaseTtlMs, leasedAtMs), retry);
    durable = new DurableRun(durability, runId, version, clock, leasedAtMs, [], log?.messages);
  } catch (error) {
    registry.unregister(abort);
    abort.dispose();
    if (KeelError.isInstance(error) && error.code === 'config.invalid') throw error;
    if (!created && isSessionConflict(error)) throw error;
    return notStarted<Output>(state, toStoreError(error), clock.now(), created);
  }
  return driveRun<Output>(runtime, registry, agentRuns, state, options, true, { abort, durable });
}

/**
 * After `createRun` failed: a duplicate id is the caller's mistake (`config.invalid`), unless the record is the one
 * this run wrote in an attempt whose answer was lost (then its version goes on).
 */
async function createdAfterAll(
  durability: DurabilitySettings,
  runId: string,
  snapshot: StateSnapshot,
  error: unknown,
  clock: Clock,
): Promise<number> {
  if (!KeelError.isInstance(error) || error.code !== 'store.conflict' || isSessionConflict(error))
    throw error;
  const existing = await withStoreTimeout(
    () => durability.store.loadRun(runId),
    durability.storeTimeoutMs,
    clock,
  ).catch(() => undefined);
  if (existing !== undefined && holdsSnapshot(existing, 1, snapshot)) return 1;
  throw new KeelError(
    'config.invalid',
    `run: a run with id "${runId}" already exists in the store; pass a unique runId, or resume it with resume(runId)`,
    { data: { where: 'run', runId }, cause: error },
  );
}

/** The result of a durable run whose store failed before it could start (`created`: its record is stored). */
function notStarted<Output>(
  state: RunState,
  error: KeelError,
  nowMs: number,
  created: boolean,
): RunResult<Output> {
  const stopReason = error.code === 'store.conflict' ? 'lease_lost' : 'store_unavailable';
  const status = created ? 'interrupted' : 'failed';
  countError(state.report, error.code);
  endRun(state, { status, stopReason, error: error.toJSON() }, nowMs);
  return resultOf<Output>(state, { status, stopReason, error }, created);
}
