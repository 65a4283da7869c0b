import { type Agent, KeelError, type RunStore } from '@keel/core';
import { optionError, requireInteger } from '@keel/core/adapter';
import { type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { settlesBy } from './bounded.js';
import { checkOptionsObject, checkStore } from './check-options.js';
import { failRun, jobFailure } from './fail-run.js';
import { type CancellationMessage, cancelChannelOf, queueNameOf, type RunJobData } from './fleet-names.js';
import { processRunJob, type RunJobResult } from './process-job.js';
import { closeRedis, type OpenedRedis, openRedis, type RedisConnection } from './redis-connection.js';
import { prefixOf } from './run-queue.js';
import { sweep } from './sweep.js';
import { TenantSlots, type WorkerTenantOptions } from './tenant-slots.js';
import type { WorkerEvent, WorkerEventListener } from './worker-events.js';

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  /**
   * The agents this worker runs, each durable on the fleet's run store (`store` option) with a name of its own. A
   * job names its agent; a worker takes only jobs of agents it has. Required.
   */
  agents: readonly Agent<unknown>[];
  /** The fleet's run store, the one the agents use (looked at for answers and by the sweep). Required. */
  store: RunStore;
  /** Redis: a URL such as `redis://127.0.0.1:6379`, or an ioredis client (left open on close). Required. */
  redis: RedisConnection;
  /** Prefix of every Redis key, as the fleet's `runQueue` has it. Defaults to `keel`. */
  prefix?: string;
  /** Runs at once, per agent. Defaults to 1. */
  concurrency?: number;
  /**
   * How long a job stays locked to this worker without a renewal (BullMQ `lockDuration`), in ms: a worker that dies
   * gives its runs up after this long. Keep it close to the agents' `durability.leaseTtlMs`. Defaults to 30_000.
   */
  lockDurationMs?: number;
  /** How often the workers look for jobs whose worker died (BullMQ `stalledInterval`), in ms. Defaults to 30_000. */
  stalledIntervalMs?: number;
  /** Times a job may lose its worker before it is failed, for a human to look at. Defaults to 10. */
  maxStalls?: number;
  /** How often the store is swept for runs no job carries (see `sweep`), in ms; 0 never sweeps. Defaults to 60_000. */
  sweepIntervalMs?: number;
  /** Wait before a run whose store failed (or that runs here already) is tried again, in ms. Defaults to 5_000. */
  retryDelayMs?: number;
  /**
   * Longest wait for Redis when closing, in ms, counted once the runs in progress have paused (their leases freed in
   * the store): BullMQ's workers and queues not closed by then are dropped with their connections, so `close`
   * settles while Redis is down. Defaults to 5_000.
   */
  closeTimeoutMs?: number;
  /**
   * How many runs of one tenant the fleet runs at once (see {@link WorkerTenantOptions}): a job beyond its tenant's
   * limit goes back to the queue, delayed, for any worker to try again. Defaults to no limit.
   */
  tenants?: WorkerTenantOptions;
  /** Receives what the worker does. Defaults to none. */
  onEvent?: WorkerEventListener;
}

/** A worker of a fleet, taking runs from the queues of its agents. */
export interface RunWorker {
  /** Runs in progress in this worker, by id. */
  readonly running: ReadonlySet<string>;
  /**
   * Shuts down gracefully: takes no more runs; the runs in progress stop at their next checkpoint with no tool call
   * running (calls already running finish and are saved), free their leases and go back to the queue, for another
   * worker to resume at once; then the connections close, waiting for Redis at most `closeTimeoutMs` (then they are
   * dropped: `close` settles while Redis is down). Safe to call twice.
   */
  close(): Promise<void>;
  /** Sweeps the store once now (see `sweepIntervalMs`); resolves with the runs enqueued again. */
  sweep(): Promise<string[]>;
}

const OPTIONS = [
  'agents',
  'store',
  'redis',
  'prefix',
  'concurrency',
  'lockDurationMs',
  'stalledIntervalMs',
  'maxStalls',
  'sweepIntervalMs',
  'retryDelayMs',
  'closeTimeoutMs',
  'tenants',
  'onEvent',
];
const WHERE = 'runWorker';

/**
 * Starts a worker of a fleet: BullMQ workers take the runs of its agents from Redis, and each run is resumed from
 * the run store by its agent, durably. A run whose worker died is taken again (its job stalls, or the sweep finds
 * it) and resumed from its last checkpoint once the dead worker's lease runs out; the tool ledger keeps its effects
 * at most once. Cancellations published by `runQueue.cancel` reach the run at once.
 *
 * @example
 *   const worker = runWorker({ agents: [support], store, redis: 'redis://127.0.0.1:6379', concurrency: 8 });
 *   process.once('SIGTERM', () => void worker.close());
 */
export function runWorker(options: RunWorkerOptions): RunWorker {
  checkOptionsObject(options, OPTIONS, WHERE, "{ agents: [agent], store, redis: 'redis://127.0.0.1:6379' }");
  checkStore(options.store, WHERE);
  const { store } = options;
  const agents = agentsByName(options.agents, store);
  const prefix = prefixOf(options.prefix, WHERE);
  const concurrency = requireInteger(options.concurrency, {
    where: WHERE,
    option: 'concurrency',
    min: 1,
    default: 1,
  });
  const lockDurationMs = requireInteger(options.lockDurationMs, {
    where: WHERE,
    option: 'lockDurationMs',
    min: 100,
    default: 30_000,
  });
  const stalledIntervalMs = requireInteger(options.stalledIntervalMs, {
    where: WHERE,
    option: 'stalledIntervalMs',
    min: 100,
    default: 30_000,
  });
  const maxStalls = requireInteger(options.maxStalls, {
    where: WHERE,
    option: 'maxStalls',
    min: 1,
    default: 10,
  });
  const sweepIntervalMs = requireInteger(options.sweepIntervalMs, {
    where: WHERE,
    option: 'sweepIntervalMs',
    min: 0,
    default: 60_000,
  });
  const retryDelayMs = requireInteger(options.retryDelayMs, {
    where: WHERE,
    option: 'retryDelayMs',
    min: 0,
    default: 5_000,
  });
  const closeTimeoutMs = requireInteger(options.closeTimeoutMs, {
    where: WHERE,
    option: 'closeTimeoutMs',
    min: 0,
    default: 5_000,
  });
  const listener = options.onEvent;
  if (listener !== undefined && typeof listener !== 'function')
    throw optionError({ where: WHERE, option: 'onEvent', message: 'onEvent must be a function' });
  const emit = (event: WorkerEvent): void => {
    if (listener === undefined) return;
    try {
      listener(event);
    } catch (error) {
      process.emitWarning(`keel: a worker's onEvent listener threw: ${String(error)}`);
    }
  };
  const failed = (error: unknown, runId?: string) =>
    emit({
      type: 'worker-error',
      ...(runId === undefined ? {} : { runId }),
      error: KeelError.isInstance(error)
        ? error
        : new KeelError('store.unavailable', `Redis: ${(error as Error)?.message ?? String(error)}`, {
            cause: error,
          }),
      atMs: Date.now(),
    });

  // A job failed for good (no retries are configured): its run ends `failed` rather than wait for it forever.
  const endFailedRun = async ({ runId, agentName }: RunJobData, error: Error) => {
    const failure = jobFailure(error, runId, maxStalls);
    failed(failure, runId);
    try {
      if (!(await failRun(store, runId, failure, Date.now()))) return;
    } catch (storeError) {
      failed(storeError, runId);
      return;
    }
    emit({
      type: 'run-finished',
      runId,
      agentName,
      status: 'failed',
      stopReason: 'internal_error',
      atMs: Date.now(),
      errorCode: failure.code,
    });
  };
  const redis: OpenedRedis = openRedis(options.redis, WHERE, true);
  redis.client.on('error', () => undefined);
  let tenants: TenantSlots | undefined;
  try {
    tenants =
      options.tenants === undefined ? undefined : new TenantSlots(redis.client, prefix, options.tenants);
  } catch (error) {
    void closeRedis(redis, Date.now() + closeTimeoutMs);
    throw error;
  }
  const active = new Map<string, AbortController>();
  // Jobs being processed, Redis calls included (a paused run's job goes back to the queue after the run stopped).
  const processing = new Set<Promise<unknown>>();
  const idleWaiters: Array<() => void> = [];
  let closing: Promise<void> | undefined;
  const context = {
    agents,
    store,
    active,
    retryDelayMs,
    leaseMarginMs: 50,
    tenants,
    closing: () => closing !== undefined,
    emit,
    runEnded: () => {
      if (active.size === 0) for (const wake of idleWaiters.splice(0)) wake();
    },
  };
  const processJob = (job: Job<RunJobData>, token: string | undefined) => {
    const work = processRunJob(context, job, token);
    processing.add(work);
    const forget = () => processing.delete(work);
    work.then(forget, forget);
    return work;
  };
  const queues = new Map<string, Queue<RunJobData>>();
  const workers: Worker<RunJobData, RunJobResult>[] = [];
  let subscriber: Redis;
  try {
    for (const name of agents.keys()) {
      const queueName = queueNameOf(name);
      const queue = new Queue<RunJobData>(queueName, { connection: redis.client, prefix });
      queue.on('error', (error) => failed(error));
      queues.set(name, queue);
      const worker = new Worker<RunJobData, RunJobResult>(queueName, processJob, {
        connection: redis.client,
        prefix,
        concurrency,
        lockDuration: lockDurationMs,
        stalledInterval: stalledIntervalMs,
        maxStalledCount: maxStalls,
        // Started once every part is built: a part BullMQ refuses leaves nothing running.
        autorun: false,
      });
      worker.on('error', (error) => failed(error));
      worker.on('failed', (job, error) => {
        if (job === undefined || (error instanceof Error && error.name === 'DelayedError')) return;
        void endFailedRun(job.data, error);
      });
      workers.push(worker);
    }

    subscriber = redis.client.duplicate();
  } catch (error) {
    // A part that could not be built (BullMQ refused something): what was built is closed, not left running.
    for (const worker of workers) void worker.close(true).catch(() => undefined);
    for (const queue of queues.values()) void queue.close().catch(() => undefined);
    void closeRedis(redis, Date.now() + closeTimeoutMs);
    throw error;
  }
  for (const worker of workers) worker.run().catch((error: unknown) => failed(error));
  // Cancellations reach the run at once, in whichever worker holds it; the store's request is seen at the run's
  // next checkpoint in any case.
  subscriber.on('error', () => undefined);
  const channel = cancelChannelOf(prefix);
  subscriber.subscribe(channel).catch((error: unknown) => failed(error));
  subscriber.on('message', (from: string, text: string) => {
    if (from !== channel) return;
    let message: CancellationMessage;
    try {
      message = JSON.parse(text) as CancellationMessage;
    } catch {
      return;
    }
    if (typeof message?.runId !== 'string' || !active.has(message.runId)) return;
    for (const agent of agents.values()) agent.cancel(message.runId, message.reason);
  });

  const sweepContext = {
    store,
    queues,
    graceMs: Math.max(sweepIntervalMs, lockDurationMs),
    pageSize: 500,
    emit,
  };
  const sweepNow = () => sweep(sweepContext, Date.now());
  let sweeping = false;
  const timer =
    sweepIntervalMs === 0
      ? undefined
      : setInterval(() => {
          if (sweeping || closing !== undefined) return;
          sweeping = true;
          sweepNow()
            .catch((error: unknown) => failed(error))
            .finally(() => {
              sweeping = false;
            });
        }, sweepIntervalMs);
  timer?.unref();

  return {
    get running() {
      return new Set(active.keys());
    },
    sweep: sweepNow,
    close() {
      closing ??= (async () => {
        if (timer !== undefined) clearInterval(timer);
        // Takes no more jobs (a job BullMQ hands over still is handed back at once, see processRunJob).
        for (const worker of workers) void worker.pause(true).catch(() => undefined);
        for (const pause of active.values()) pause.abort();
        // The runs in progress pause at their next checkpoint and free their leases in the store: no Redis needed.
        while (active.size > 0) await new Promise<void>((resolve) => idleWaiters.push(resolve));
        // Their jobs go back to the queue, and BullMQ closes, while Redis answers within closeTimeoutMs.
        const deadlineMs = Date.now() + closeTimeoutMs;
        // A part still connecting (a worker stopped just after it started) is closed once connected: BullMQ drops the
        // listeners of a part it closes, and a connection step still under way would then fail unheard (an
        // unhandled "Connection is closed.").
        const parts = [...workers, ...queues.values()];
        await settlesBy(Promise.allSettled(parts.map((part) => part.waitUntilReady())), deadlineMs);
        await settlesBy(Promise.allSettled(processing), deadlineMs);
        await settlesBy(Promise.allSettled(workers.map((worker) => worker.close(true))), deadlineMs);
        await settlesBy(Promise.allSettled([...queues.values()].map((queue) => queue.close())), deadlineMs);
        subscriber.disconnect();
        await closeRedis(redis, deadlineMs);
        await Promise.all(workers.map((worker) => stopStalledChecker(worker)));
      })();
      return closing;
    },
  };
}

/**
 * Stops BullMQ's stalled-job checker for good. A worker closed while a check was under way (closed just after it
 * started, say) starts one more wait of `stalledIntervalMs` once that check settles, after `close` stopped the
 * checker: that timer would hold the process for that long. Its stopper is called until the checker has ended, for
 * at most a second. Relies on the checker's internals in BullMQ 5 (`stalledCheckerRunning`, `stalledCheckStopper`).
 */
async function stopStalledChecker(worker: Worker<RunJobData, RunJobResult>): Promise<void> {
  const checker = worker as unknown as { stalledCheckerRunning?: boolean; stalledCheckStopper?: () => void };
  const deadlineMs = Date.now() + 1_000;
  while (checker.stalledCheckerRunning === true && Date.now() < deadlineMs) {
    checker.stalledCheckStopper?.();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The agents by name; `config.invalid` for an empty list, an agent that is not durable on `store` (no store, or
 * another one: the worker would look for its runs in the wrong place), or two of one name.
 */
function agentsByName(agents: unknown, store: RunStore): Map<string, Agent<unknown>> {
  if (!Array.isArray(agents) || agents.length === 0) {
    throw optionError({
      where: WHERE,
      option: 'agents',
      message: 'agents must be a non-empty array of agents, such as [agent({ name, model, store })]',
    });
  }
  const byName = new Map<string, Agent<unknown>>();
  for (const candidate of agents as Agent<unknown>[]) {
    if (typeof candidate?.resume !== 'function' || typeof candidate.name !== 'string') {
      throw optionError({
        where: WHERE,
        option: 'agents',
        message: 'every entry of agents must be an agent made by agent()',
      });
    }
    if (candidate.store === undefined) {
      throw optionError({
        where: WHERE,
        option: 'agents',
        message: `agent "${candidate.name}" has no store: give it the worker's store, agent({ name, model, store })`,
      });
    }
    if (candidate.store !== store) {
      throw optionError({
        where: WHERE,
        option: 'agents',
        message: `agent "${candidate.name}" is durable on another store than the worker's: give both the same store`,
      });
    }
    if (byName.has(candidate.name)) {
      throw optionError({
        where: WHERE,
        option: 'agents',
        message: `two agents are named "${candidate.name}": a job names its agent, so names must differ`,
      });
    }
    byName.set(candidate.name, candidate);
  }
  return byName;
}
