// A small fleet for the worker's tests: agents on one shared store, a queue and workers on a real Redis under a
// prefix of their own, and waits on worker events (never on the clock). Compiled with the package for its tests; not
// part of its API.
import { randomUUID } from 'node:crypto';
import type { Agent, RunStore } from '@keel/core';
import { type RunQueue, type RunQueueOptions, runQueue } from './run-queue.js';
import { type RunWorker, type RunWorkerOptions, runWorker } from './run-worker.js';
import type { WorkerEvent } from './worker-events.js';

/** A queue and the workers started on one prefix, with every event the workers emitted. */
export class FleetFixture {
  readonly prefix = `keel-test-${randomUUID().slice(0, 8)}`;
  readonly events: Array<WorkerEvent & { worker: number }> = [];
  readonly queue: RunQueue;
  private readonly workers: RunWorker[] = [];
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly store: RunStore,
    readonly redisUrl: string,
    queueOptions: Partial<RunQueueOptions> = {},
  ) {
    this.queue = runQueue({ store, redis: redisUrl, prefix: this.prefix, ...queueOptions });
  }

  /** Starts a worker of `agents`; its events are numbered by the order workers were started. */
  worker(agents: Agent<unknown>[], options: Partial<RunWorkerOptions> = {}): RunWorker {
    const index = this.workers.length;
    const worker = runWorker({
      agents,
      store: this.store,
      redis: this.redisUrl,
      prefix: this.prefix,
      retryDelayMs: 100,
      sweepIntervalMs: 0,
      ...options,
      onEvent: (event) => {
        this.events.push({ ...event, worker: index });
        for (const wake of this.waiters.splice(0)) wake();
      },
    });
    this.workers.push(worker);
    return worker;
  }

  /** Resolves with the first event (now or later) that `matches`. */
  async event(
    matches: (event: WorkerEvent & { worker: number }) => boolean,
  ): Promise<WorkerEvent & { worker: number }> {
    for (;;) {
      const found = this.events.find(matches);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves once the run finished in some worker. */
  finished(runId: string) {
    return this.event((event) => event.type === 'run-finished' && event.runId === runId) as Promise<
      Extract<WorkerEvent, { type: 'run-finished' }> & { worker: number }
    >;
  }

  /** The types of one run's events, in order. */
  eventsOf(runId: string): string[] {
    return this.events
      .filter((event) => 'runId' in event && event.runId === runId)
      .map((event) => event.type);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((worker) => worker.close()));
    await this.queue.close();
  }
}
