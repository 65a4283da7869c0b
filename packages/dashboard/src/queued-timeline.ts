import type { QueuedRunState, RunSummary } from '@keel/core';
import type { Timeline } from './timeline.js';

/**
 * The timeline of a run submitted to a fleet that no worker has started: one span in the `queue` lane from its
 * submission to now (it waits for a worker), or to the moment it was cancelled while still queued.
 */
export function queuedTimeline(summary: RunSummary, queued: QueuedRunState, nowMs: number): Timeline {
  const waiting = summary.status === 'queued';
  const submittedAtMs = queued.submittedAtMs;
  const durationMs = Math.max(0, (waiting ? nowMs : summary.updatedAtMs) - submittedAtMs);
  const starting =
    waiting && summary.lease !== undefined && summary.lease.expiresAtMs > nowMs
      ? `worker ${summary.lease.owner} is starting it`
      : undefined;
  return {
    startedAtMs: submittedAtMs,
    durationMs,
    entries: [
      {
        lane: 'queue',
        label: waiting ? 'queued: waits for a worker' : `${summary.status} before a worker started it`,
        detail: starting ?? `agent ${summary.agentName}`,
        startMs: 0,
        endMs: durationMs,
        timing: 'exact',
        outcome: waiting ? 'waiting' : 'info',
      },
    ],
    notes: [
      waiting
        ? `Submitted to the fleet, not started yet: a worker serving agent ${summary.agentName} (keel worker) takes it from the queue and runs it from its input.`
        : 'No worker started it: nothing of it ran.',
    ],
  };
}
