import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { KeelError } from '../errors/keel-error.js';
import type { Clock } from '../policies/clock.js';
import { sleep } from '../policies/sleep.js';
import type { RunStore } from '../spec/run-store.js';
import { agentConfigError as fail } from './agent-dependencies.js';

/** How durable runs use their store. Only meaningful with the agent's `store` option. */
export interface DurabilityOptions {
  /**
   * How long a run's lease lasts, in milliseconds, unless renewed. The lease is renewed at checkpoints and by a
   * heartbeat (every third of the TTL) while a long model or tool call runs; a process that dies stops renewing it,
   * and another process may resume the run once it has expired. Defaults to 30_000.
   */
  leaseTtlMs?: number;
  /**
   * Who holds the leases of this agent's runs. Two agents with the same owner count as one process. Defaults to
   * `${hostname}:${pid}:${random}`, one value per process.
   */
  owner?: string;
  /**
   * Attempts of a store write that fails with `store.unavailable`, the first included, with a short backoff (100 ms,
   * doubling) on the agent's clock; then the run pauses (`interrupted`, stop reason `store_unavailable`). Defaults to 3.
   */
  storeMaxAttempts?: number;
}

/** The agent's `store` and `durability` options, resolved. */
export interface DurabilitySettings {
  readonly store: RunStore;
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly storeMaxAttempts: number;
}

/** The default lease owner: this process. */
export const PROCESS_OWNER = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

const STORE_METHODS = [
  'createRun',
  'loadRun',
  'saveCheckpoint',
  'acquireLease',
  'releaseLease',
  'recordToolStarted',
  'recordToolCompleted',
  'ledger',
  'requestCancellation',
] as const;

const DURABILITY_OPTIONS = ['leaseTtlMs', 'owner', 'storeMaxAttempts'];

/** Checks `store` and `durability`; undefined without a store (runs are then not durable). */
export function resolveDurability(
  store: RunStore | undefined,
  durability: DurabilityOptions | undefined,
): DurabilitySettings | undefined {
  if (store === undefined) {
    if (durability !== undefined)
      fail('durability needs a store: pass store as well, such as new SqliteRunStore(path)');
    return undefined;
  }
  const candidate = store as unknown as Record<string, unknown>;
  const missing = STORE_METHODS.filter((method) => typeof candidate?.[method] !== 'function');
  if (typeof store !== 'object' || store === null || missing.length > 0) {
    fail(`store must be a RunStore (such as new SqliteRunStore(path)); missing: ${missing.join(', ')}`);
  }
  const options = durability ?? {};
  if (typeof options !== 'object' || options === null)
    fail('durability must be an object such as { leaseTtlMs }');
  for (const key of Object.keys(options)) {
    if (!DURABILITY_OPTIONS.includes(key)) {
      fail(`unknown durability option "${key}"; known options: ${DURABILITY_OPTIONS.join(', ')}`);
    }
  }
  const leaseTtlMs = options.leaseTtlMs ?? 30_000;
  if (!Number.isInteger(leaseTtlMs) || leaseTtlMs < 100 || leaseTtlMs > 86_400_000) {
    fail('durability.leaseTtlMs must be an integer from 100 to 86_400_000 (milliseconds)');
  }
  const owner = options.owner ?? PROCESS_OWNER;
  if (typeof owner !== 'string' || owner.trim() === '' || owner.length > 200) {
    fail('durability.owner must be a non-empty string of at most 200 characters');
  }
  const storeMaxAttempts = options.storeMaxAttempts ?? 3;
  if (!Number.isInteger(storeMaxAttempts) || storeMaxAttempts < 1 || storeMaxAttempts > 10) {
    fail('durability.storeMaxAttempts must be an integer from 1 to 10');
  }
  return { store, owner, leaseTtlMs, storeMaxAttempts };
}

/** Whether a store failure is worth another attempt: an outage, or a fault that is not a KeelError at all. */
export function isStoreOutage(error: unknown): boolean {
  return !KeelError.isInstance(error) || error.code === 'store.unavailable';
}

/** A store failure as a KeelError: anything that is not one already counts as the store being unavailable. */
export function toStoreError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  return new KeelError(
    'store.unavailable',
    `The run store failed: ${String((error as Error)?.message ?? error)}`,
    {
      cause: error,
    },
  );
}

/**
 * Runs a store operation, retrying outages (`store.unavailable`) up to `maxAttempts` attempts with a short doubling
 * backoff on the clock. `onRetry` hears of each retry (with the attempt that failed) before its wait. Rejects with the last failure as a KeelError.
 */
export async function withStoreRetries<T>(
  operation: () => Promise<T>,
  options: {
    maxAttempts: number;
    clock: Clock;
    onRetry?: (error: KeelError, delayMs: number, attempt: number) => void;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isStoreOutage(error) || attempt >= options.maxAttempts) throw toStoreError(error);
      const delayMs = Math.min(100 * 2 ** (attempt - 1), 2_000);
      options.onRetry?.(toStoreError(error), delayMs, attempt);
      await sleep(delayMs, options.clock);
    }
  }
}
