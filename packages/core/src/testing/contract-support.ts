import { KeelError } from '../errors/keel-error.js';
import type { CheckpointWrite, RunStore } from '../spec/run-store.js';

/** The contract suites' "now": every time they hand a store is relative to it. */
export const NOW_MS = 1_700_000_000_000;

/** The code of the KeelError `promise` rejects with; fails the test when it resolves. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  return (await errorOf(promise)).code;
}

/** The KeelError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function errorOf(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the store to reject');
}

/** Unique run ids for one suite (stores may be shared between test files). */
export function runIds(prefix: string): () => string {
  let counter = 0;
  return () => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

/** Creates a contract run with a small state. */
export function createContractRun(store: RunStore, runId: string, createdAtMs = NOW_MS) {
  return store.createRun({
    runId,
    agentName: 'contract',
    status: 'running',
    schemaVersion: 1,
    state: { step: 0, messages: [{ role: 'user', content: 'héllo ✓' }] },
    createdAtMs,
  });
}

/** A checkpoint by `owner` at `NOW_MS`, to be completed with its version and state. */
export function checkpointBy(
  owner: string,
  fields: Partial<CheckpointWrite> & Pick<CheckpointWrite, 'expectedVersion'>,
): CheckpointWrite {
  return { owner, status: 'running', schemaVersion: 1, state: {}, nowMs: NOW_MS, ...fields };
}

/** The store without its `commitStep`: durable runs on it make the separate calls (ledger, lease, checkpoint). */
export function withoutCommitStep(store: RunStore): RunStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'commitStep') return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
