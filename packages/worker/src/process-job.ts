import {
  type Agent,
  KeelError,
  type ResumeOptions,
  type RunEvent,
  type RunResult,
  type RunStore,
} from '@keel/core';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { recordCancellation } from './cancelled-run.js';
import type { RunJobData } from './fleet-names.js';
import { DEFAULT_TENANT, type TenantPlace, type TenantSlots } from './tenant-slots.js';
import type { WorkerEvent } from './worker-events.js';

/** What processing a job needs from its worker. */
export interface JobContext {
  readonly agents: ReadonlyMap<string, Agent<unknown>>;
  readonly store: RunStore;
  /** Runs in progress here, with the switch that pauses each. */
  readonly active: Map<string, AbortController>;
  /** Wait before a run whose store failed is tried again, in ms. */
  readonly retryDelayMs: number;
  /** Added to a lease's remaining time before a run held elsewhere is tried again, in ms. */
  readonly leaseMarginMs: number;
  /** Whether the worker is shutting down: a run taken now is handed back at once. */
  readonly closing: () => boolean;
  readonly emit: (event: WorkerEvent) => void;
  /** Called once a run stopped here (it is no longer in `active`). */
  readonly runEnded: () => void;
  /** The fleet's places per tenant (`tenants`); undefined when the worker limits none. */
  readonly tenants?: TenantSlots;
}

/** What a finished job returns (BullMQ keeps it with the job until it is removed). */
export interface RunJobResult {
  status: string;
  stopReason: string;
}

/**
 * Runs one job: resumes its run with its agent (a queued run starts, a crashed or paused one goes on from its last
 * checkpoint, an interrupted one gets the job's answers). A run that cannot go on here and now goes back to the
 * queue: its lease is held by another process (until that lease ends), its store failed (after `retryDelayMs`), or
 * this worker is shutting down (at once, for another worker). A run the store does not know, or that no agent here
 * can resume, fails the job for good (and the worker ends the run as `failed`, see `failRun`).
 */
export async function processRunJob(
  context: JobContext,
  job: Job<RunJobData>,
  token: string | undefined,
): Promise<RunJobResult> {
  const { runId, agentName } = job.data;
  const agent = context.agents.get(agentName);
  if (agent === undefined) throw new UnrecoverableError(`this worker has no agent "${agentName}"`);
  const requeue = async (
    reason: Extract<WorkerEvent, { type: 'run-requeued' }>['reason'],
    delayMs: number,
  ) => {
    context.emit({ type: 'run-requeued', runId, agentName, reason, delayMs, atMs: Date.now() });
    try {
      await job.moveToDelayed(Date.now() + delayMs, token);
    } catch (error) {
      // Redis did not take it back: the job keeps its lock until it runs out, then stalls and is taken again. Not a
      // failure of the run.
      context.emit({ type: 'worker-error', runId, error: redisError(error, runId), atMs: Date.now() });
    }
    throw new DelayedError();
  };
  if (context.closing()) return requeue('paused', 0);
  if (context.active.has(runId)) return requeue('busy', context.retryDelayMs);
  let place: TenantPlace | undefined;
  if (context.tenants !== undefined) {
    let tenant = job.data.tenant;
    if (tenant === undefined) {
      try {
        tenant = await tenantOfRun(context.store, runId);
      } catch (error) {
        context.emit({
          type: 'worker-error',
          runId,
          error: tenantError(error, runId, 'store'),
          atMs: Date.now(),
        });
        return requeue('store_unavailable', context.retryDelayMs);
      }
    }
    try {
      place = await context.tenants.hold(tenant, runId);
    } catch (error) {
      context.emit({
        type: 'worker-error',
        runId,
        error: tenantError(error, runId, 'redis'),
        atMs: Date.now(),
      });
      return requeue('store_unavailable', context.retryDelayMs);
    }
    // Its tenant's places are all taken in the fleet: the job waits in the queue, not in a worker's slot.
    if (place === undefined) return requeue('tenant_busy', context.tenants.retryDelayMs);
  }
  context.emit({ type: 'run-taken', runId, agentName, atMs: Date.now() });
  const pause = new AbortController();
  context.active.set(runId, pause);
  // Taken while the worker began to shut down: it pauses before anything runs.
  if (context.closing()) pause.abort();
  let result: RunResult<unknown>;
  let answered = false;
  try {
    const answers = await answersFor(context.store, job.data);
    answered = answers.approvals !== undefined || answers.decisions !== undefined;
    const resume = (given: Pick<ResumeOptions, 'approvals' | 'decisions'>) =>
      agent.resume(runId, {
        ...given,
        pauseSignal: pause.signal,
        onEvent: (event) => progress(context, agentName, event),
      });
    try {
      result = await resume(answers);
    } catch (error) {
      // The run moved on between the look at it and the resume (a cancellation got there first, another worker
      // applied the answers): they are spent, and the run goes on (or reports its end) without them.
      if (!answered || !isConfigInvalid(error) || (await stillInterrupted(context.store, runId))) throw error;
      answered = false;
      result = await resume({});
    }
  } catch (error) {
    if (error instanceof DelayedError) throw error;
    const keelError = KeelError.isInstance(error) ? error : undefined;
    if (keelError?.code === 'store.conflict') {
      // Another process holds the run (its worker may have died: its lease runs out), or this one already runs it.
      const leftMs = keelError.retryAfterMs;
      if (leftMs !== undefined) return requeue('lease_held', leftMs + context.leaseMarginMs);
      return requeue('busy', context.retryDelayMs);
    }
    if (keelError?.code === 'store.unavailable') return requeue('store_unavailable', context.retryDelayMs);
    if (keelError !== undefined) {
      // The run is ended as failed with this error once BullMQ has failed the job (see `failRun`).
      throw Object.assign(new UnrecoverableError(`${keelError.code}: ${keelError.message}`), {
        cause: keelError,
      });
    }
    throw error;
  } finally {
    await place?.release();
    context.active.delete(runId);
    context.runEnded();
  }
  if (
    result.status === 'interrupted' &&
    (result.stopReason === 'paused' || result.stopReason === 'store_unavailable')
  ) {
    // The answers are in the run's state now: asking again with them would be refused.
    if (answered) {
      // Not done (Redis failed): the next worker finds the run no longer waiting and leaves the answers out.
      await job.updateData({ runId, agentName }).catch((error: unknown) => {
        context.emit({ type: 'worker-error', runId, error: redisError(error, runId), atMs: Date.now() });
      });
    }
    return result.stopReason === 'paused'
      ? requeue('paused', 0)
      : requeue('store_unavailable', context.retryDelayMs);
  }
  if (result.status === 'cancelled' && result.state.status !== 'cancelled') {
    // Cancelled while its worker was dead: the store says cancelled, the state still shows its last step running.
    await recordCancellation(context.store, runId, Date.now()).catch((error: unknown) => {
      context.emit({
        type: 'worker-error',
        runId,
        error: KeelError.isInstance(error)
          ? error
          : new KeelError(
              'internal.unexpected',
              `Run ${runId}: its cancellation was not recorded in its state`,
              {
                cause: error,
                data: { runId },
              },
            ),
        atMs: Date.now(),
      });
    });
  }
  context.emit({
    type: 'run-finished',
    runId,
    agentName,
    status: result.status,
    stopReason: result.stopReason,
    atMs: Date.now(),
    ...(result.error === undefined ? {} : { errorCode: result.error.code }),
  });
  return { status: result.status, stopReason: result.stopReason };
}

function redisError(error: unknown, runId: string): KeelError {
  return new KeelError(
    'store.unavailable',
    `Redis did not take the job of run ${runId}: ${(error as Error)?.message ?? String(error)}`,
    { cause: error, data: { runId } },
  );
}

/** A failure to learn a run's tenant (from the store) or to take its tenant's place (in Redis). */
function tenantError(error: unknown, runId: string, where: 'store' | 'redis'): KeelError {
  const cause = (error as Error)?.message ?? String(error);
  const message =
    where === 'store'
      ? `the store could not load run ${runId} to learn its tenant: ${cause}`
      : `Redis could not take a place of the tenant for run ${runId}: ${cause}`;
  return new KeelError('store.unavailable', message, { cause: error, data: { runId } });
}

/**
 * The job's answers, if the run still waits for them: a job taken again after its worker died may carry answers
 * that the run's state already holds (the run went on past its interruption), which resume would refuse.
 */
async function answersFor(
  store: RunStore,
  data: RunJobData,
): Promise<Pick<ResumeOptions, 'approvals' | 'decisions'>> {
  if (data.approvals === undefined && data.decisions === undefined) return {};
  const record = await store.loadRun(data.runId);
  if (record?.status !== 'interrupted') return {};
  return {
    ...(data.approvals === undefined ? {} : { approvals: data.approvals }),
    ...(data.decisions === undefined ? {} : { decisions: data.decisions }),
  };
}

/** The tenant a stored run spends for (its queued or running state names it); `default` for none. */
async function tenantOfRun(store: RunStore, runId: string): Promise<string> {
  const state = (await store.loadRun(runId))?.state as { tenant?: unknown } | null | undefined;
  return typeof state?.tenant === 'string' ? state.tenant : DEFAULT_TENANT;
}

function isConfigInvalid(error: unknown): boolean {
  return KeelError.isInstance(error) && error.code === 'config.invalid';
}

async function stillInterrupted(store: RunStore, runId: string): Promise<boolean> {
  return (await store.loadRun(runId))?.status === 'interrupted';
}

function progress(context: JobContext, agentName: string, event: RunEvent): void {
  if (event.type === 'run-start') {
    context.emit({ type: 'run-started', runId: event.runId, agentName, atMs: event.atMs });
  } else if (event.type === 'run-resumed') {
    context.emit({ type: 'run-resumed', runId: event.runId, agentName, step: event.step, atMs: event.atMs });
  }
}
