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
}, 120_000);

afterAll(async () => {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
}, 30_000);

runStoreContract(
  'PostgresRunStore',
  () => new PostgresRunStore({ connectionString: databaseUrl, maxConnections: 4 }),
  { persistent: true },
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

  it('rejects missing and bad options with config.invalid naming the option and the known ones', () => {
    const known =
      'known options: connectionString, pool, maxConnections, connectTimeoutMs, statementTimeoutMs';
    const cases: Array<[unknown, RegExp]> = [
      [undefined, new RegExp(`options must be an object .*${known}`)],
      [null, /options must be an object/],
      [{}, /connectionString must be a connection string/],
      [
        { connectionString: 'postgres://x', statementTimeout: 5 },
        new RegExp(`unknown option "statementTimeout"; ${known}`),
      ],
      [{ connectionString: 'postgres://x', maxConnections: 0 }, /maxConnections must be a positive integer/],
      [
        { connectionString: 'postgres://x', connectTimeoutMs: 1.5 },
        /connectTimeoutMs must be a positive integer/,
      ],
      [{ pool: {} }, /pool must be a pg.Pool/],
    ];
    for (const [options, message] of cases) {
      expect(() => new PostgresRunStore(options as never), String(JSON.stringify(options))).toThrow(
        expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(message) }),
      );
    }
  });

  it("sends a new run's messages as one JSON text, never an array escaped message by message, each kept as sent", async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const sent: unknown[][] = [];
    const query = pool.query.bind(pool) as (config: unknown) => Promise<unknown>;
    (pool as unknown as { query: (config: unknown) => Promise<unknown> }).query = (config) => {
      const values = (config as { values?: unknown[] }).values;
      if (values !== undefined) sent.push(values);
      return query(config);
    };
    const store = new PostgresRunStore({ pool });
    try {
      const messages = [
        { role: 'user', content: 'quotes " and \\ backslashes, a tab\t, a NUL \u0000' },
        {
          role: 'assistant',
          content: 'été, 漢字, 😀, a lone \ud83d half',
          toolCalls: [{ id: 'c', name: 'n' }],
        },
        ...Array.from({ length: 1_000 }, (_, index) => ({ role: 'user', content: `message ${index}` })),
      ];
      const texts = messages.map((message) => JSON.stringify(message));
      await store.createRun({
        runId: 'one-json',
        agentName: 'a',
        status: 'running',
        schemaVersion: 1,
        state: { messages: messages.length },
        createdAtMs: 1,
        messages: { start: 0, texts, messages: messages as never },
      });
      expect(sent.flat().some((value) => Array.isArray(value))).toBe(false);
      const record = await store.loadRun('one-json');
      expect(record).toMatchObject({ messageCount: messages.length, state: { messages } });
      const rows = await pool.query<{ message: string }>(
        "SELECT message FROM keel_run_messages WHERE run_id = 'one-json' ORDER BY idx",
      );
      expect(rows.rows.map((row) => row.message)).toEqual(texts);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('reports a statement the server refuses as store.invalid, which is not worth retrying', async () => {
    const badName = `${databaseName}_refused`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${badName}`);
    await admin.query(`CREATE DATABASE ${badName}`);
    const badUrl = url!.replace(/\/[^/]*$/, `/${badName}`);
    const store = new PostgresRunStore({ connectionString: badUrl });
    try {
      // Class 22: a value the column cannot hold.
      const tooBig = await store
        .createRun({
          runId: 'big',
          agentName: 'a',
          status: 'running',
          schemaVersion: 1,
          state: {},
          createdAtMs: 1e300,
        })
        .catch((caught: unknown) => caught);
      expect(tooBig).toMatchObject({ code: 'store.invalid', retryable: false, data: { sqlState: '22P02' } });
      // Class 42: a table that is not there (something else changed keel's schema).
      const other = new pg.Client({ connectionString: badUrl });
      await other.connect();
      await other.query('DROP TABLE keel_ledger');
      await other.end();
      const missing = await store.ledger('big').catch((caught: unknown) => caught);
      expect(missing).toMatchObject({ code: 'store.invalid', retryable: false, data: { sqlState: '42P01' } });
      // A lost race is still a conflict.
      await store.createRun({
        runId: 'twice',
        agentName: 'a',
        status: 'running',
        schemaVersion: 1,
        state: {},
        createdAtMs: 1,
      });
      const twice = await store
        .createRun({
          runId: 'twice',
          agentName: 'a',
          status: 'running',
          schemaVersion: 1,
          state: {},
          createdAtMs: 1,
        })
        .catch((caught: unknown) => caught);
      expect(twice).toMatchObject({ code: 'store.conflict', data: { sqlState: '23505' } });
    } finally {
      await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${badName} WITH (FORCE)`);
      await admin.end();
    }
  });
});
