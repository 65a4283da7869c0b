import type { KeelError, RunStatus, StopReason } from '@keel/core';

/**
 * What a worker does, as it happens: a run taken from the queue, started (a queued run's first step) or resumed from
 * its last checkpoint (after its worker died, a pause, answers or a store outage), finished here (in any terminal
 * state, `interrupted` included), handed back to the queue (`requeued`: another process holds its lease, the store
 * failed, this worker is shutting down, or its tenant has no place free: `tenant_busy`), enqueued again by the sweep (`swept`: no job carried it), or a failure
 * of the worker itself (`worker-error`: Redis or the store unreachable, a job that could not be processed).
 */
export type WorkerEvent =
  | { type: 'run-taken'; runId: string; agentName: string; atMs: number }
  | { type: 'run-started'; runId: string; agentName: string; atMs: number }
  | { type: 'run-resumed'; runId: string; agentName: string; step: number; atMs: number }
  | {
      type: 'run-finished';
      runId: string;
      agentName: string;
      status: RunStatus;
      stopReason: StopReason;
      atMs: number;
      errorCode?: string;
    }
  | {
      type: 'run-requeued';
      runId: string;
      agentName: string;
      reason: 'lease_held' | 'store_unavailable' | 'paused' | 'busy' | 'tenant_busy';
      delayMs: number;
      atMs: number;
    }
  | { type: 'run-swept'; runId: string; agentName: string; atMs: number }
  | { type: 'worker-error'; runId?: string; error: KeelError; atMs: number };

/** Receives a worker's events; a listener that throws is reported as a warning and ignored. */
export type WorkerEventListener = (event: WorkerEvent) => void;
