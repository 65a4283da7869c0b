import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, KeelError, tool } from '@keel/core';
import { FakeClock, FaultyRunStore, runStoreContract, scriptedModel } from '@keel/core/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

runStoreContract('SqliteRunStore (memory)', () => new SqliteRunStore(':memory:'));
runStoreContract('SqliteRunStore (file, WAL)', () => new SqliteRunStore(join(directory, 'contract.db')), {
  persistent: true,
});

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

  it('rejects bad options with config.invalid naming the option and the known ones', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        null,
        /options must be an object .*known options: synchronous, busyTimeoutMs, readOnly, walAutocheckpoint/,
      ],
      [[], /options must be an object/],
      [
        { synchronus: 'full' },
        /unknown option "synchronus"; known options: synchronous, busyTimeoutMs, readOnly, walAutocheckpoint/,
      ],
      [{ synchronous: 'off' }, /synchronous must be "normal" or "full", not "off"/],
      [{ busyTimeoutMs: -1 }, /busyTimeoutMs must be an integer from 0/],
      [{ busyTimeoutMs: 1.5 }, /busyTimeoutMs must be an integer/],
      [{ busyTimeoutMs: 2 ** 31 }, /busyTimeoutMs must be an integer/],
      [{ readOnly: 'yes' }, /readOnly must be true or false, not "yes"/],
      [
        { walAutocheckpoint: -1 },
        /walAutocheckpoint must be an integer from 0 to 2_147_483_647 \(pages\), not -1/,
      ],
      [{ walAutocheckpoint: '1000' }, /walAutocheckpoint must be an integer/],
    ];
    for (const [options, message] of cases) {
      expect(() => new SqliteRunStore(':memory:', options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(message) }),
      );
    }
    const store = new SqliteRunStore(':memory:', { busyTimeoutMs: 0, synchronous: 'full' });
    expect(await store.listRuns()).toEqual([]);
    await store.close();
  });

  it('copies its write-ahead log back past walAutocheckpoint pages, 10,000 unless told', async () => {
    const path = join(directory, 'checkpoint-pages.db');
    const pagesOf = (store: SqliteRunStore) =>
      (store as unknown as { database: Database.Database }).database.pragma('wal_autocheckpoint', {
        simple: true,
      });
    const byDefault = new SqliteRunStore(path);
    expect(pagesOf(byDefault)).toBe(10_000);
    await byDefault.close();
    const told = new SqliteRunStore(path, { walAutocheckpoint: 1_000 });
    expect(pagesOf(told)).toBe(1_000);
    await told.close();
  });
});

describe('a damaged database', () => {
  async function damagedStore(): Promise<string> {
    const path = join(directory, `damaged-${Math.random().toString(36).slice(2)}.db`);
    const store = new SqliteRunStore(path);
    for (let index = 0; index < 200; index++) {
      await store.createRun({
        runId: `run-${index}`,
        agentName: 'a',
        status: 'completed',
        schemaVersion: 2,
        state: { padding: 'x'.repeat(200) },
        createdAtMs: index,
      });
    }
    await store.close();
    // Every page past the first (the schema) overwritten: the tables' pages no longer parse.
    const descriptor = openSync(path, 'r+');
    const pages = Math.floor(statSync(path).size / 4096);
    for (let page = 1; page < pages; page++)
      writeSync(descriptor, Buffer.alloc(4096, 0xff), 0, 4096, page * 4096);
    closeSync(descriptor);
    return path;
  }

  it('is store.invalid (not retryable) with guidance when the file is not a SQLite database', () => {
    const path = join(directory, 'not-a-database.db');
    writeFileSync(path, 'this is not a database '.repeat(100));
    const error = (() => {
      try {
        new SqliteRunStore(path);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toMatchObject({
      code: 'store.invalid',
      retryable: false,
      data: { sqliteCode: 'SQLITE_NOTADB', path },
      message: expect.stringContaining(`The SQLite run store ${path} is damaged or not a SQLite database`),
      guidance: expect.stringMatching(/move .* aside/i),
    });
  });

  it('is store.invalid when a page is damaged, whether read at open or later', async () => {
    const path = await damagedStore();
    const error = await (async () => {
      const store = new SqliteRunStore(path);
      try {
        await store.listRuns();
        await store.loadRun('run-7');
      } finally {
        await store.close();
      }
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'store.invalid',
      retryable: false,
      data: { sqliteCode: 'SQLITE_CORRUPT' },
    });
  });
});

describe('a read-only store (readOnly: true)', () => {
  async function storeWithRun(path: string): Promise<void> {
    const store = new SqliteRunStore(path);
    await store.createRun({
      runId: 'kept',
      agentName: 'a',
      status: 'interrupted',
      schemaVersion: 2,
      state: { step: 3 },
      createdAtMs: 5,
    });
    await store.recordToolStarted({
      runId: 'kept',
      idempotencyKey: 'kept:1:0',
      step: 1,
      callIndex: 0,
      toolName: 'charge',
      startedAtMs: 6,
    });
    await store.close();
  }

  it('reads runs and ledgers, and refuses every write with store.invalid', async () => {
    const path = join(directory, 'read-only.db');
    await storeWithRun(path);
    const store = new SqliteRunStore(path, { readOnly: true });
    expect((await store.listRuns()).map((run) => run.runId)).toEqual(['kept']);
    expect((await store.loadRun('kept'))?.state).toEqual({ step: 3 });
    expect(await store.ledger('kept')).toHaveLength(1);
    await expect(store.acquireLease('kept', 'me', 1_000, 10)).rejects.toMatchObject({
      code: 'store.invalid',
      message: expect.stringMatching(/read-only/),
    });
    await expect(store.requestCancellation('kept', 'no', 10)).rejects.toMatchObject({
      code: 'store.invalid',
    });
    await store.close();
  });

  it('creates nothing where there is no database', () => {
    const path = join(directory, 'nowhere', 'keel.db');
    expect(() => new SqliteRunStore(path, { readOnly: true })).toThrow(
      expect.objectContaining({ code: 'config.invalid', message: expect.stringMatching(/no database at/) }),
    );
    expect(() => statSync(join(directory, 'nowhere'))).toThrow(/ENOENT/);
  });

  it('says so when the database is not a keel store', () => {
    const path = join(directory, 'foreign.db');
    new Database(path).exec('CREATE TABLE photos (id INTEGER)');
    expect(() => new SqliteRunStore(path, { readOnly: true })).toThrow(
      expect.objectContaining({
        code: 'store.invalid',
        message: expect.stringMatching(/not a keel run store/),
      }),
    );
  });
});

describe('durable runs of agents sharing one SQLite file', () => {
  const startMs = 1_700_000_000_000;
  /** An agent as one process would make it: its own connection, owner and clock. */
  function processAgent(
    store: SqliteRunStore | FaultyRunStore,
    owner: string,
    nowMs: number,
    effects: string[],
  ) {
    const charge = tool({
      name: 'charge',
      description: 'Charges the card (not idempotent)',
      input: {
        type: 'object',
        properties: { amountCents: { type: 'integer' } },
        required: ['amountCents'],
      } as const,
      execute: ({ amountCents }: { amountCents: number }, context) => {
        effects.push(context.idempotencyKey);
        return { charged: amountCents };
      },
    });
    const model = scriptedModel((request) => {
      const step = request.messages.filter((message) => message.role === 'assistant').length;
      return step < 3
        ? { toolCalls: [{ name: 'charge', arguments: { amountCents: 100 * (step + 1) } }] }
        : { content: 'done' };
    });
    return agent({
      name: 'shared',
      model,
      tools: [charge],
      clock: new FakeClock(nowMs),
      store,
      durability: { owner, leaseTtlMs: 30_000, storeMaxAttempts: 1 },
    });
  }

  it('lets another process resume a crashed run once its lease has expired, and only then', async () => {
    const path = join(directory, 'agents.db');
    const firstConnection = new SqliteRunStore(path);
    const secondConnection = new SqliteRunStore(path);
    const effects: string[] = [];
    const crashing = new FaultyRunStore(firstConnection);
    crashing.writeLimit = 3; // dies in the middle of step 2, before its call starts
    const crashed = await processAgent(crashing, 'process-a', startMs, effects).run('pay', {
      runId: 'shared-1',
    });
    expect(crashed).toMatchObject({ status: 'interrupted', stopReason: 'store_unavailable' });
    expect(effects).toEqual(['shared-1:1:0']);

    const early = processAgent(secondConnection, 'process-b', startMs + 5_000, effects);
    await expect(early.resume('shared-1')).rejects.toMatchObject({ code: 'store.conflict' });
    const late = processAgent(secondConnection, 'process-b', startMs + 31_000, effects);
    const done = await late.resume('shared-1');
    expect(done).toMatchObject({ status: 'completed', output: 'done' });
    expect(effects).toEqual(['shared-1:1:0', 'shared-1:2:0', 'shared-1:3:0']);
    expect((await firstConnection.loadRun('shared-1'))?.status).toBe('completed');
    // The first process, back, finds the run ended and calls nothing.
    const back = await processAgent(firstConnection, 'process-a', startMs + 40_000, effects).resume(
      'shared-1',
    );
    expect(back).toMatchObject({ status: 'completed', output: 'done', resumable: false });
    expect(effects).toHaveLength(3);
    await firstConnection.close();
    await secondConnection.close();
  });

  it('lets exactly one of two processes that resume a run at once proceed', async () => {
    const path = join(directory, 'race.db');
    const connections = [new SqliteRunStore(path), new SqliteRunStore(path)];
    const effects: string[] = [];
    const crashing = new FaultyRunStore(connections[0]!);
    crashing.writeLimit = 3;
    await processAgent(crashing, 'process-a', startMs, effects).run('pay', { runId: 'race-1' });
    const outcomes = await Promise.allSettled(
      connections.map((connection, index) =>
        processAgent(connection, `process-${index}`, startMs + 60_000, effects).resume('race-1'),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(KeelError.isInstance(rejected.reason) && rejected.reason.code).toBe('store.conflict');
    expect([...new Set(effects)]).toEqual(effects);
    expect(effects).toEqual(['race-1:1:0', 'race-1:2:0', 'race-1:3:0']);
    for (const connection of connections) await connection.close();
  });
});
