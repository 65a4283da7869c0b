import { messageOf } from '../../errors/error-chain.js';
import { KeelError } from '../../errors/keel-error.js';
import type { Clock } from '../../policies/clock.js';
import { sleep } from '../../policies/sleep.js';
import type { DurabilitySettings } from '../run/durability.js';

/** How the durable path calls its store: attempts, the wait for each, and the clock both run on. */
export interface StoreCallOptions {
  /** Attempts of an operation that fails with `store.unavailable`, the first included. */
  readonly maxAttempts: number;
  /** Longest wait for one attempt before it counts as `store.unavailable`. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  /** Hears of each retry (with the attempt that failed) before its wait. */
  readonly onRetry?: (error: KeelError, delayMs: number, attempt: number) => void;
}

/** Whether a store failure is worth another attempt: an outage, or a fault that is not a KeelError at all. */
export function isStoreOutage(error: unknown): boolean {
  return !KeelError.isInstance(error) || error.code === 'store.unavailable';
}

/** A store failure as a KeelError: anything that is not one already counts as the store being unavailable. */
export function toStoreError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  return new KeelError('store.unavailable', `The run store failed: ${messageOf(error)}`, { cause: error });
}

/**
 * Settles as the store operation does, or rejects with `store.unavailable` once `timeoutMs` passed on the clock.
 * The operation itself cannot be stopped; its late outcome is ignored (a late write is found by the next
 * checkpoint's version check).
 */
export function withStoreTimeout<T>(
  operation: () => Promise<T>,
  timeoutMs: number,
  clock: Clock,
): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = operation();
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      reject(
        new KeelError('store.unavailable', `The run store did not answer within ${timeoutMs} ms`, {
          data: { timeoutMs },
          guidance: 'Check that the store is reachable; raise durability.storeTimeoutMs for a slow one.',
        }),
      );
    }, timeoutMs);
    pending.then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Runs a store operation, each attempt bounded by `timeoutMs`, retrying outages (`store.unavailable`) up to
 * `maxAttempts` attempts with a short doubling backoff (100 ms, at most 2 s) on the clock. Rejects with the last
 * failure as a KeelError.
 */
export async function withStoreRetries<T>(
  operation: () => Promise<T>,
  options: StoreCallOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withStoreTimeout(operation, options.timeoutMs, options.clock);
    } catch (error) {
      if (!isStoreOutage(error) || attempt >= options.maxAttempts) throw toStoreError(error);
      const delayMs = Math.min(100 * 2 ** (attempt - 1), 2_000);
      options.onRetry?.(toStoreError(error), delayMs, attempt);
      await sleep(delayMs, options.clock);
    }
  }
}

/** The store-call options of a durable run's settings. */
export function storeCallsOf(settings: DurabilitySettings, clock: Clock): StoreCallOptions {
  return { maxAttempts: settings.storeMaxAttempts, timeoutMs: settings.storeTimeoutMs, clock };
}
