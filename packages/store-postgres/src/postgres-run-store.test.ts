import { KeelError } from '@keel/core';
import { closedPort, runStoreContract } from '@keel/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunStore } from './postgres-run-store.js';

const url = process.env.KEEL_TEST_POSTGRES_URL;
if (url === undefined)
  throw new Error('KEEL_TEST_POSTGRES_URL is not set: the vitest global setup starts PostgreSQL');

// Each test file gets a database of its own, so files running in parallel never see each other's rows.
const databaseName = `keel_store_test_${process.pid}`;
const databaseUrl = url.replace(/\/[^/]*$/, `/${databaseName}`);

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName}`);
  await admin.query(`CREATE DATABASE ${databaseName}`);
  await admin.end();
});

afterAll(async () => {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
});

runStoreContract(
  'PostgresRunStore',
  () => new PostgresRunStore({ connectionString: databaseUrl, maxConnections: 4 }),
);

describe('PostgresRunStore', () => {
  it('migrates safely when several stores start at once', async () => {
    const stores = Array.from({ length: 4 }, () => new PostgresRunStore({ connectionString: databaseUrl }));
    await Promise.all(stores.map((store) => store.listRuns()));
    await Promise.all(stores.map((store) => store.close()));
  });

  it('reports an unreachable server as store.unavailable', async () => {
    const port = await closedPort();
    const store = new PostgresRunStore({
      connectionString: `postgres://keel@127.0.0.1:${port}/keel`,
      connectTimeoutMs: 2_000,
    });
    const error = await store.loadRun('x').catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('store.unavailable');
    expect(KeelError.isInstance(error) && error.retryable).toBe(true);
    await store.close();
  });

  it('rejects missing options with config.invalid', () => {
    expect(() => new PostgresRunStore({})).toThrow(expect.objectContaining({ code: 'config.invalid' }));
    expect(() => new PostgresRunStore({ connectionString: 'postgres://x', maxConnections: 0 })).toThrow(
      /maxConnections must be a positive integer/,
    );
  });
});
