// Where a fleet keeps things in Redis: every key under one prefix, a BullMQ queue per agent, one channel for
// cancellations. Producers and workers derive the same names from the same prefix.

/** The key prefix of a fleet unless told otherwise. */
export const DEFAULT_PREFIX = 'keel';

/** The BullMQ queue of an agent's runs: one queue per agent, so a worker takes only runs of agents it has. */
export function queueNameOf(agentName: string): string {
  // BullMQ separates key parts with ':', so a name must not hold one.
  return `runs.${encodeURIComponent(agentName)}`;
}

/**
 * The BullMQ job id of a run: `run.` and the run id, percent-encoded. BullMQ refuses ids that are integers (`42`) or
 * hold a `:`; this form is neither, and is one to one, so every run id has a job id of its own and every part of a
 * fleet derives the same one.
 */
export function jobIdOf(runId: string): string {
  return `run.${encodeURIComponent(runId)}`;
}

/**
 * The job id of the answers to a run at one version: a retried `answer` (its first try timed out but reached Redis
 * later) adds no second job. `/` never occurs in {@link jobIdOf}'s form, so no run's job id collides with it.
 */
export function answerJobIdOf(runId: string, version: number): string {
  return `${jobIdOf(runId)}/answer/${version}`;
}

/** The channel on which cancellations reach the worker that holds the run. */
export function cancelChannelOf(prefix: string): string {
  return `${prefix}:cancellations`;
}

/** What a job carries: the run, the agent that runs it, and the answers an interrupted run was waiting for. */
export interface RunJobData {
  runId: string;
  agentName: string;
  /**
   * The run's tenant, when `submit` named one: workers with `tenants` limits read it here rather than from the store.
   * Defaults to none (read from the run's record).
   */
  tenant?: string;
  /** Answers to approvals, by idempotency key (see `ResumeOptions.approvals`). */
  approvals?: Record<string, { approved: true } | { approved: false; reason?: string }>;
  /** Decisions about calls that may have run, by idempotency key (see `ResumeOptions.decisions`). */
  decisions?: Record<string, 'execute' | 'abandon'>;
}

/** A cancellation as published on the channel. */
export interface CancellationMessage {
  runId: string;
  reason: string;
}
