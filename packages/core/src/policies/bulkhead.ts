import { NEVER_ABORTED_SIGNAL, runInContext, toContext } from './context.js';
import { Emitter } from './events.js';
import type { Event, Policy, PolicyContext, PolicyFunction, SignalInput } from './policy.js';
import { rejectionError } from './rejection.js';
import {
  rejectUnknownOptions,
  requireNonNegativeInteger,
  requireOptionsObject,
  requirePositiveInteger,
} from './validate.js';

/** Options of {@link bulkhead}. */
export interface BulkheadOptions {
  /** How many calls may run at once. Required: a positive integer. */
  maxConcurrent: number;
  /** How many calls may wait for a slot, in arrival order. Defaults to 0 (reject at once when all slots are busy). */
  maxQueued?: number;
}

/** Emitted when a call is turned away because every slot and queue place is taken. */
export interface BulkheadRejectedEvent {
  readonly maxConcurrent: number;
  readonly maxQueued: number;
}

/** A concurrency limit: at most `maxConcurrent` calls run, at most `maxQueued` wait. */
export interface BulkheadPolicy extends Policy {
  /** Calls running now. */
  readonly executing: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
  /** Fires when a call is rejected with `policy.bulkhead_full`. */
  readonly onRejected: Event<BulkheadRejectedEvent>;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/**
 * Limits how many calls run at once. Calls beyond the limit wait in a FIFO queue; once the queue is full they are
 * rejected with `policy.bulkhead_full` (retryable; `data` holds `maxConcurrent` and `maxQueued`).
 *
 * A waiting call whose signal aborts leaves the queue at once and rejects with the signal's reason, so cancelled
 * callers never hold queue places or receive slots. A call below the limit allocates nothing beyond its own promise.
 *
 * @example
 *   const tools = bulkhead({ maxConcurrent: 4, maxQueued: 16 });
 *   const result = await tools.execute(({ signal }) => fetch(url, { signal }), callerSignal);
 */
export function bulkhead(options: BulkheadOptions): BulkheadPolicy {
  const { maxConcurrent, maxQueued } = validate(options);
  const rejections = new Emitter<BulkheadRejectedEvent>();
  // A Set keeps arrival order and removes an aborted waiter in O(1), wherever it sits.
  const queue = new Set<Waiter>();
  let executing = 0;

  const release = (): void => {
    for (const waiter of queue) {
      // The slot passes straight to the oldest waiter: `executing` stays the same, so no newcomer can take it.
      queue.delete(waiter);
      if (waiter.signal !== NEVER_ABORTED_SIGNAL) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
      return;
    }
    executing--;
  };

  const enqueue = (context: PolicyContext): Promise<void> => {
    if (queue.size >= maxQueued) {
      if (rejections.hasListeners) rejections.emit({ maxConcurrent, maxQueued });
      return Promise.reject(
        rejectionError(
          'policy.bulkhead_full',
          `bulkhead full: ${maxConcurrent} calls running and ${maxQueued} waiting`,
          {
            data: { maxConcurrent, maxQueued },
          },
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const signal = context.signal;
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          queue.delete(waiter);
          reject(signal.reason);
        },
      };
      queue.add(waiter);
      if (signal !== NEVER_ABORTED_SIGNAL) signal.addEventListener('abort', waiter.onAbort, { once: true });
    });
  };

  return {
    execute<T>(fn: PolicyFunction<T>, signal?: SignalInput): Promise<T> {
      const context = toContext(signal);
      if (context.aborted) return Promise.reject(context.signal.reason);
      if (executing < maxConcurrent) {
        executing++;
        return runInContext(fn, context, release);
      }
      return enqueue(context).then(() => {
        // Aborted between the hand-off and this callback: pass the slot on rather than start doomed work.
        if (context.aborted) {
          release();
          throw context.signal.reason;
        }
        return runInContext(fn, context, release);
      });
    },
    get executing() {
      return executing;
    },
    get queued() {
      return queue.size;
    },
    onRejected: rejections.event,
  };
}

const FACTORY = 'bulkhead';

function validate(options: BulkheadOptions): { maxConcurrent: number; maxQueued: number } {
  requireOptionsObject(options, FACTORY, '{ maxConcurrent: 4 }');
  rejectUnknownOptions(options, ['maxConcurrent', 'maxQueued'], FACTORY);
  return {
    maxConcurrent: requirePositiveInteger(options.maxConcurrent, 'maxConcurrent', FACTORY),
    maxQueued: requireNonNegativeInteger(options.maxQueued ?? 0, 'maxQueued', FACTORY, {
      allowInfinity: true,
    }),
  };
}
