import {
  type ApprovalAnswer,
  type Clock,
  KeelError,
  type Message,
  migrateRunState,
  newRunId,
  queuedRun,
  type RunStatus,
  type RunStore,
  systemClock,
  type ToolCallDecision,
} from '@keel/core';
import { optionError, requireInteger } from '@keel/core/adapter';
import { Queue } from 'bullmq';
import { settlesBy } from './bounded.js';
import { checkOptionsObject, checkStore } from './check-options.js';
import {
  answerJobIdOf,
  type CancellationMessage,
  cancelChannelOf,
  DEFAULT_PREFIX,
  jobIdOf,
  queueNameOf,
  type RunJobData,
} from './fleet-names.js';
import { closeRedis, openRedis, type RedisConnection } from './redis-connection.js';

/** Options of {@link runQueue}. */
export interface RunQueueOptions {
  /** The fleet's run store (PostgreSQL, shared by every worker): a submitted run is stored there first. Required. */
  store: RunStore;
  /** Redis: a URL such as `redis://127.0.0.1:6379`, or an ioredis client (left open on close). Required. */
  redis: RedisConnection;
  /** Prefix of every Redis key; producers and workers of one fleet share it. Defaults to `keel`. */
  prefix?: string;
  /**
   * Longest wait for Redis to take a job or a cancellation message, in ms: a run not enqueued by then is left for a
   * worker's sweep, a cancellation not published is found by the run's next checkpoint. Defaults to 5_000.
   */
  enqueueTimeoutMs?: number;
  /**
   * Longest wait for Redis when closing, in ms: queues not closed by then are dropped with the connection, so `close`
   * settles while Redis is down. Defaults to 5_000.
   */
  closeTimeoutMs?: number;
  /**
   * Told of each failure of the Redis client the queue opened (Redis unreachable: once per reconnection attempt,
   * `store.unavailable`). Calls that need Redis fail or give up on their own in any case. Defaults to none.
   */
  onError?: (error: KeelError) => void;
  /** Stamps stored records (`createdAtMs`, cancellations). Defaults to the system clock. */
  clock?: Clock;
}

/** Options of {@link RunQueue.submit}. */
export interface SubmitOptions {
  /** The run's id. Defaults to a time-ordered UUID (`newRunId`). */
  runId?: string;
  /** The tenant the run spends for: its tenant budgets, metrics labels. Defaults to none (tenant `default`). */
  tenant?: string;
  /**
   * The run's pace priority, an integer from -10 to 10: when calls wait for a provider's window (the agent's `pace`),
   * higher ones go first. Defaults to 0.
   */
  priority?: number;
}

/** What {@link RunQueue.submit} did. */
export interface Submitted {
  runId: string;
  /**
   * Whether Redis took the job. A run it did not take (Redis unreachable) is stored all the same, as `queued`, and a
   * worker's sweep enqueues it once Redis answers.
   */
  enqueued: boolean;
}

/** Answers to what an interrupted run waits for (see `ResumeOptions`). */
export interface RunAnswers {
  /** Answers to approvals, by idempotency key. Defaults to none. */
  approvals?: Record<string, ApprovalAnswer>;
  /** Decisions about calls that may have run, by idempotency key. Defaults to none. */
  decisions?: Record<string, ToolCallDecision>;
}

/** The producer side of a fleet: submits runs, cancels them, answers interrupted ones. */
export interface RunQueue {
  /**
   * Stores a run as `queued` in the run store (listed at once), then enqueues it for the workers that have the agent
   * `agentName`. Rejects with `config.invalid` for a bad agent name, input or id (an id already stored included),
   * and with the store's errors.
   */
  submit(agentName: string, input: string | readonly Message[], options?: SubmitOptions): Promise<Submitted>;
  /**
   * Cancels a run from anywhere: a queued, interrupted or orphaned run is `cancelled` at once; a running one ends
   * `cancelled` in the worker that holds it, told through Redis at once (and by its next checkpoint in any case).
   * Resolves with the run's stored status afterwards.
   */
  cancel(runId: string, reason?: string): Promise<RunStatus>;
  /**
   * Answers an interrupted run (approvals, decisions) and enqueues it: a worker resumes it with the answers.
   * Rejects with `config.invalid` when the run is not interrupted or a key names nothing it waits for.
   */
  answer(runId: string, answers: RunAnswers): Promise<void>;
  /** Closes the queues and the Redis client it opened, waiting for Redis at most `closeTimeoutMs`. */
  close(): Promise<void>;
}

const OPTIONS = ['store', 'redis', 'prefix', 'enqueueTimeoutMs', 'closeTimeoutMs', 'onError', 'clock'];
const WHERE = 'runQueue';

/**
 * The producer side of a fleet of workers (see `runWorker`): BullMQ queues on Redis carry the runs, the run store
 * holds their state from the moment they are submitted.
 *
 * @example
 *   const queue = runQueue({ store: new PostgresRunStore({ connectionString }), redis: 'redis://127.0.0.1:6379' });
 *   const { runId } = await queue.submit('support', 'Refund order 42');
 */
export function runQueue(options: RunQueueOptions): RunQueue {
  checkOptionsObject(options, OPTIONS, WHERE, "{ store, redis: 'redis://127.0.0.1:6379' }");
  checkStore(options.store, WHERE);
  const { store } = options;
  const prefix = prefixOf(options.prefix, WHERE);
  const enqueueTimeoutMs = requireInteger(options.enqueueTimeoutMs, {
    where: WHERE,
    option: 'enqueueTimeoutMs',
    min: 1,
    default: 5_000,
  });
  const closeTimeoutMs = requireInteger(options.closeTimeoutMs, {
    where: WHERE,
    option: 'closeTimeoutMs',
    min: 0,
    default: 5_000,
  });
  const clock = options.clock ?? systemClock;
  const { onError } = options;
  if (onError !== undefined && typeof onError !== 'function')
    throw optionError({ where: WHERE, option: 'onError', message: 'onError must be a function' });
  const redis = openRedis(options.redis, WHERE, false);
  // Without a listener ioredis prints every failed reconnection; a caller's client is left to its owner.
  if (redis.owned) {
    redis.client.on('error', (error: Error) => {
      try {
        onError?.(
          new KeelError('store.unavailable', `Redis: ${error.message}`, {
            cause: error,
            data: { where: WHERE },
          }),
        );
      } catch (thrown) {
        process.emitWarning(`keel: a runQueue onError listener threw: ${String(thrown)}`);
      }
    });
  }
  const queues = new Map<string, Queue<RunJobData>>();
  const queueOf = (agentName: string): Queue<RunJobData> => {
    let queue = queues.get(agentName);
    if (queue === undefined) {
      queue = new Queue<RunJobData>(queueNameOf(agentName), { connection: redis.client, prefix });
      // Redis going away is reported through the calls that fail; the client reconnects by itself.
      queue.on('error', () => undefined);
      queues.set(agentName, queue);
    }
    return queue;
  };
  /**
   * Adds a job under `jobId` within `enqueueTimeoutMs`. With `replaceFailed`, a job of that id that failed for good
   * (kept a week for a human) is removed first: an answer sent again reaches the run rather than meet the id of a
   * job that will never run again.
   */
  const enqueue = async (data: RunJobData, jobId: string, replaceFailed = false): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), enqueueTimeoutMs);
    });
    const queue = queueOf(data.agentName);
    const add = async () => {
      if (replaceFailed) {
        const previous = await queue.getJob(jobId);
        if (previous !== undefined && (await previous.isFailed())) await previous.remove();
      }
      await queue.add('run', data, {
        jobId,
        removeOnComplete: true,
        removeOnFail: { age: 7 * 24 * 3_600 },
      });
    };
    const added = add().then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([added, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    async submit(agentName, input, submitOptions = {}) {
      checkOptionsObject(
        submitOptions,
        ['runId', 'tenant', 'priority'],
        'submit',
        "{ runId: 'run-42', tenant: 'acme', priority: 5 }",
      );
      const runId = submitOptions.runId ?? newRunId();
      const { tenant, priority } = submitOptions;
      const run = queuedRun({
        runId,
        agentName,
        input,
        nowMs: clock.now(),
        ...(tenant === undefined ? {} : { tenant }),
        ...(priority === undefined ? {} : { priority }),
      });
      try {
        await store.createRun(run);
      } catch (error) {
        if (KeelError.isInstance(error) && error.code === 'store.conflict') {
          throw optionError({
            where: 'submit',
            option: 'runId',
            message: `a run with id "${runId}" already exists in the store; pass a unique runId`,
          });
        }
        throw error;
      }
      const data = { runId, agentName, ...(tenant === undefined ? {} : { tenant }) };
      return { runId, enqueued: await enqueue(data, jobIdOf(runId)) };
    },

    async cancel(runId, reason = 'cancelled') {
      if (typeof runId !== 'string' || runId === '')
        throw optionError({ where: 'cancel', option: 'runId', message: 'runId must be a non-empty string' });
      const status = await store.requestCancellation(runId, reason, clock.now());
      if (status === 'running') {
        const message: CancellationMessage = { runId, reason };
        // Best effort, for at most enqueueTimeoutMs: the run's next checkpoint finds the request in the store anyway.
        const published = redis.client.publish(cancelChannelOf(prefix), JSON.stringify(message));
        await settlesBy(published, Date.now() + enqueueTimeoutMs);
      }
      return status;
    },

    async answer(runId, answers) {
      checkOptionsObject(
        answers,
        ['approvals', 'decisions'],
        'answer',
        '{ approvals: { [key]: { approved: true } } }',
      );
      const record = await store.loadRun(runId);
      if (record === undefined) {
        throw new KeelError('store.not_found', `Run ${runId} is not in the store`, { data: { runId } });
      }
      if (record.status !== 'interrupted') {
        throw optionError({
          where: 'answer',
          option: 'runId',
          message: `run ${runId} is ${record.status}, not interrupted: it waits for no answer`,
        });
      }
      const pending = migrateRunState(record.state, runId).pendingDecisions;
      const waiting = (kind: string) =>
        pending.filter((entry) => entry.kind === kind).map((entry) => entry.idempotencyKey);
      checkKeys(runId, 'approvals', answers.approvals, waiting('approval'));
      checkKeys(runId, 'decisions', answers.decisions, waiting('uncertain'));
      const data: RunJobData = { runId, agentName: record.agentName };
      if (answers.approvals !== undefined) data.approvals = answers.approvals;
      if (answers.decisions !== undefined) data.decisions = answers.decisions;
      if (!(await enqueue(data, answerJobIdOf(runId, record.version), true))) {
        throw new KeelError(
          'store.unavailable',
          `Redis did not take the answers to run ${runId}; try again`,
          {
            data: { runId },
          },
        );
      }
    },

    async close() {
      const deadlineMs = Date.now() + closeTimeoutMs;
      await settlesBy(Promise.allSettled([...queues.values()].map((queue) => queue.close())), deadlineMs);
      await closeRedis(redis, deadlineMs);
    },
  };
}

/** The key prefix, checked: letters, digits, `-`, `_` and `.`. */
export function prefixOf(value: unknown, where: string): string {
  if (value === undefined) return DEFAULT_PREFIX;
  if (typeof value !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(value)) {
    throw optionError({
      where: where,
      option: 'prefix',
      message: 'prefix must be 1 to 64 letters, digits, ".", "-" or "_"',
    });
  }
  return value;
}

function checkKeys(runId: string, option: string, given: unknown, waiting: readonly string[]): void {
  if (given === undefined) return;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw optionError({
      where: 'answer',
      option: option,
      message: `${option} must be an object keyed by idempotency key`,
    });
  }
  for (const [key, value] of Object.entries(given)) {
    if (!waiting.includes(key)) {
      const known = waiting.length === 0 ? 'nothing of that kind' : waiting.join(', ');
      throw optionError({
        where: 'answer',
        option: option,
        message: `${option} names "${key}", which run ${runId} does not wait for (pending: ${known})`,
      });
    }
    const valid =
      option === 'approvals'
        ? typeof (value as { approved?: unknown } | null)?.approved === 'boolean'
        : value === 'execute' || value === 'abandon';
    if (!valid) {
      const expected =
        option === 'approvals'
          ? '{ approved: true } or { approved: false, reason }'
          : "'execute' or 'abandon'";
      throw optionError({
        where: 'answer',
        option: option,
        message: `${option}["${key}"] must be ${expected}`,
      });
    }
  }
}
