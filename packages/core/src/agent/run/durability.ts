import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RunStore } from '../../spec/run-store.js';
import { agentConfigError as fail } from './config-error.js';

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
  /**
   * Longest wait for one store operation, in milliseconds, on the agent's clock: a store that does not answer by then
   * counts as unavailable (`store.unavailable`, retried like any outage), so a hung connection cannot hold a run
   * forever. Defaults to 10_000.
   */
  storeTimeoutMs?: number;
}

/** The agent's `store` and `durability` options, resolved. */
export interface DurabilitySettings {
  readonly store: RunStore;
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly storeMaxAttempts: number;
  readonly storeTimeoutMs: number;
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

const DURABILITY_OPTIONS = ['leaseTtlMs', 'owner', 'storeMaxAttempts', 'storeTimeoutMs'];

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
  const storeTimeoutMs = options.storeTimeoutMs ?? 10_000;
  if (!Number.isInteger(storeTimeoutMs) || storeTimeoutMs < 1 || storeTimeoutMs > 600_000) {
    fail('durability.storeTimeoutMs must be an integer from 1 to 600_000 (milliseconds)');
  }
  return { store, owner, leaseTtlMs, storeMaxAttempts, storeTimeoutMs };
}
