// @keel/worker: durable runs distributed over worker processes with BullMQ on Redis. Explicit exports only.
export {
  answerJobIdOf,
  DEFAULT_PREFIX,
  jobIdOf,
  queueNameOf,
  type RunJobData,
} from './fleet-names.js';
export type { RedisConnection } from './redis-connection.js';
export {
  type RunAnswers,
  type RunQueue,
  type RunQueueOptions,
  runQueue,
  type SubmitOptions,
  type Submitted,
} from './run-queue.js';
export { type RunWorker, type RunWorkerOptions, runWorker } from './run-worker.js';
export type { WorkerTenantOptions } from './tenant-slots.js';
export type { WorkerEvent, WorkerEventListener } from './worker-events.js';
