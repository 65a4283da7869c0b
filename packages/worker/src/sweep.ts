import { KeelError, type RunStore, type RunSummary } from '@keel/core';
import type { Queue } from 'bullmq';
import { jobIdOf, type RunJobData } from './fleet-names.js';
import type { WorkerEvent } from './worker-events.js';

/** What a sweep needs. */
export interface SweepContext {
  readonly store: RunStore;
  /** This worker's queues, by agent name: only runs of these agents are swept. */
  readonly queues: ReadonlyMap<string, Queue<RunJobData>>;
  /** Runs changed more recently than this many ms ago are left alone: their own job is on its way. */
  readonly graceMs: number;
  /** Runs asked of the store at first, per status; the listing grows (doubling) until it holds every such run. */
  readonly pageSize: number;
  readonly emit: (event: WorkerEvent) => void;
}

/**
 * Enqueues again the runs of this worker's agents that no job carries: `queued` runs whose job never reached Redis
 * (it was down when they were submitted, or lost its data), and `running` runs with no live lease (their worker died
 * and its job is gone). A job is added under the run's job id (see `jobIdOf`), so a run that has one (waiting,
 * delayed, running, or failed for good and left for a human) is not enqueued twice, however many workers sweep at
 * once. A run that cannot be looked at or enqueued is reported (`worker-error` naming it) and the sweep goes on with
 * the others. Every `queued` and `running` run of the store is looked at, however many runs of other agents there
 * are: the store lists newest first with a limit only, so the listing is asked again, twice as long, until it comes
 * back short (about twice the rows of one full listing in all). Resolves with the runs enqueued.
 */
export async function sweep(context: SweepContext, nowMs: number): Promise<string[]> {
  const swept: string[] = [];
  for (const status of ['queued', 'running'] as const) {
    const seen = new Set<string>();
    for (let limit = context.pageSize; ; limit *= 2) {
      const runs = await context.store.listRuns({ status, limit });
      for (const run of runs) {
        if (seen.has(run.runId)) continue;
        seen.add(run.runId);
        if (await sweepRun(context, run, nowMs)) swept.push(run.runId);
      }
      if (runs.length < limit) break;
    }
  }
  return swept;
}

/** Enqueues one run if it is this worker's, no live lease holds it and no job carries it; whether it did. */
async function sweepRun(context: SweepContext, run: RunSummary, nowMs: number): Promise<boolean> {
  const queue = context.queues.get(run.agentName);
  if (queue === undefined) return false;
  if (run.lease !== undefined && run.lease.expiresAtMs > nowMs) return false;
  if (nowMs - run.updatedAtMs < context.graceMs) return false;
  try {
    if ((await queue.getJob(jobIdOf(run.runId))) !== undefined) return false;
    const data: RunJobData = { runId: run.runId, agentName: run.agentName };
    await queue.add('run', data, {
      jobId: jobIdOf(run.runId),
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3_600 },
    });
  } catch (error) {
    context.emit({
      type: 'worker-error',
      runId: run.runId,
      error: sweepError(error, run.runId),
      atMs: nowMs,
    });
    return false;
  }
  context.emit({ type: 'run-swept', runId: run.runId, agentName: run.agentName, atMs: nowMs });
  return true;
}

function sweepError(error: unknown, runId: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  return new KeelError(
    'store.unavailable',
    `Redis did not take the job of run ${runId}: ${(error as Error)?.message ?? String(error)}`,
    { cause: error, data: { runId } },
  );
}
