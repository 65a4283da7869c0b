import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { runStoreContract } from '@keel/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

runStoreContract('SqliteRunStore (memory)', () => new SqliteRunStore(':memory:'));
runStoreContract('SqliteRunStore (file, WAL)', () => new SqliteRunStore(join(directory, 'contract.db')));

describe('SqliteRunStore', () => {
  it('shares runs and leases between two connections to one file', async () => {
    const path = join(directory, 'shared.db');
    const first = new SqliteRunStore(path);
    const second = new SqliteRunStore(path);
    await first.createRun({
      runId: 'shared',
      agentName: 'a',
      status: 'running',
      schemaVersion: 1,
      state: { step: 1 },
      createdAtMs: 1,
    });
    expect((await second.loadRun('shared'))?.state).toEqual({ step: 1 });
    await first.acquireLease('shared', 'first', 60_000, 1_000);
    await expect(second.acquireLease('shared', 'second', 60_000, 1_000)).rejects.toMatchObject({
      code: 'store.conflict',
    });
    await first.close();
    await second.close();
  });

  it('fails with store.unavailable once closed', async () => {
    const store = new SqliteRunStore(':memory:');
    await store.close();
    const error = await store.loadRun('x').catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('store.unavailable');
  });

  it('rejects an empty path with config.invalid', () => {
    expect(() => new SqliteRunStore('')).toThrow(expect.objectContaining({ code: 'config.invalid' }));
  });
});
