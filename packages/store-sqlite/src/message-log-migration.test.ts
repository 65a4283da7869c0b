import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, type RunState, type RunStore, tool } from '@keel/core';
import { FakeClock, FaultyRunStore, scriptedModel } from '@keel/core/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-log-'));
const START_MS = 1_700_000_000_000;

/** An agent of four steps (a `count` call each, then `done`) on `store`, its answers set by the conversation alone. */
function counter(store: RunStore, owner: string, clock = new FakeClock(START_MS)) {
  const count = tool({
    name: 'count',
    description: 'Counts',
    input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const,
    idempotent: true,
    execute: async ({ n }: { n: number }) => ({ counted: n }),
  });
  return agent({
    name: 'counter',
    model: scriptedModel((request) => {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      return step <= 4
        ? { toolCalls: [{ id: `call_${step}`, name: 'count', arguments: { n: step } }] }
        : { content: 'done' };
    }),
    tools: [count],
    clock,
    retry: { maxAttempts: 1, toolMaxAttempts: 1 },
    store,
    durability: { storeMaxAttempts: 1, owner },
  });
}
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The store as a keel before the message log used it: every checkpoint holds the messages inline. */
function inline(store: RunStore): RunStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'messageLog' || key === 'journalLog') return false;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Takes the file back to schema 3, the last before the logs: no message_count or journal_end column, no run_messages
 * or run_journal table.
 */
function toSchema3(path: string): void {
  const database = new Database(path);
  database.exec(`ALTER TABLE runs DROP COLUMN message_count;
    ALTER TABLE runs DROP COLUMN journal_end;
    DROP TABLE run_messages;
    DROP TABLE run_journal;
    UPDATE keel_schema SET version = 3;`);
  database.close();
  toRowidLedger(path, 3);
}

/** The ledger as schema 5 and before kept it: a table with a rowid and an index on its key, its rows copied. */
function toRowidLedger(path: string, version: number): void {
  const database = new Database(path);
  database.exec(`CREATE TABLE ledger_rowid (
      run_id TEXT NOT NULL, idempotency_key TEXT NOT NULL, step INTEGER NOT NULL, call_index INTEGER NOT NULL,
      tool_name TEXT NOT NULL, status TEXT NOT NULL, result TEXT, started_at_ms INTEGER NOT NULL,
      completed_at_ms INTEGER, PRIMARY KEY (run_id, idempotency_key));
    INSERT INTO ledger_rowid SELECT * FROM ledger;
    DROP TABLE ledger;
    ALTER TABLE ledger_rowid RENAME TO ledger;
    UPDATE keel_schema SET version = ${version};`);
  database.close();
}

/** The ledger's rows, in key order. */
function ledgerRows(path: string): unknown[] {
  const database = new Database(path);
  const rows = database.prepare('SELECT * FROM ledger ORDER BY run_id, idempotency_key').all();
  database.close();
  return rows;
}

describe('SqliteRunStore: runs stored before the message log', () => {
  it('migrates a schema-3 file, resumes its inline run to the end and moves its messages to the log', async () => {
    const path = join(directory, 'schema3.db');
    const cleanStore = new SqliteRunStore(join(directory, 'clean.db'));
    const clean = await counter(cleanStore, 'clean').run('count', { runId: 'clean' });
    await cleanStore.close();

    // A keel before the log ran it, inline, and its process died after its fourth write.
    const old = new SqliteRunStore(path);
    const faulty = new FaultyRunStore(inline(old));
    faulty.writeLimit = 4;
    const crashed = await counter(faulty, 'first').run('count', { runId: 'old' });
    expect(crashed).toMatchObject({ status: 'interrupted', stopReason: 'store_unavailable' });
    await old.close();
    toSchema3(path);
    const version = new Database(path);
    expect(version.prepare('SELECT version FROM keel_schema').pluck().get()).toBe(3);
    const stateText = version.prepare('SELECT state FROM runs WHERE run_id = ?').pluck().get('old') as string;
    expect(Array.isArray((JSON.parse(stateText) as RunState).messages)).toBe(true);
    version.close();

    const store = new SqliteRunStore(path);
    const loaded = await store.loadRun('old');
    expect(loaded?.messageCount).toBeUndefined();
    const resumed = await counter(store, 'second', new FakeClock(START_MS + 600_000)).resume('old');
    expect(resumed).toMatchObject({ status: 'completed', output: 'done' });
    expect(resumed.messages).toEqual(clean.messages);
    const record = await store.loadRun('old');
    expect(record?.messageCount).toBe(clean.messages.length);
    expect((record!.state as unknown as RunState).messages).toEqual(clean.messages);
    await store.close();
    const after = new Database(path);
    expect(after.prepare('SELECT version FROM keel_schema').pluck().get()).toBe(6);
    const row = after
      .prepare('SELECT state, message_count, journal_end FROM runs WHERE run_id = ?')
      .get('old') as {
      state: string;
      message_count: number;
      journal_end: number;
    };
    // The journal moved to its log too: the row holds its entries' count.
    const journal = (record!.state as unknown as RunState).journal!;
    expect(journal.entries.length).toBeGreaterThan(0);
    expect((JSON.parse(row.state) as { journal: unknown }).journal).toEqual({
      entries: journal.entries.length,
      dropped: journal.dropped,
    });
    expect(row.journal_end).toBe(journal.dropped + journal.entries.length);
    expect(after.prepare("SELECT count(*) FROM run_journal WHERE run_id = 'old'").pluck().get()).toBe(
      journal.entries.length,
    );
    // The row holds the small state, the messages' count in their place; the log holds them (a row per write).
    expect((JSON.parse(row.state) as { messages: unknown }).messages).toBe(clean.messages.length);
    const logged = after
      .prepare("SELECT message FROM run_messages WHERE run_id = 'old' ORDER BY idx")
      .pluck()
      .all() as string[];
    expect(JSON.parse(`[${logged.join(',')}]`)).toEqual(clean.messages);
    after.close();
  });

  it('moves a schema-5 ledger to a table keyed by its primary key alone, every entry kept', async () => {
    const path = join(directory, 'schema5.db');
    const store = new SqliteRunStore(path);
    const faulty = new FaultyRunStore(store);
    faulty.writeLimit = 3;
    const crashed = await counter(faulty, 'first').run('count', { runId: 'ledger' });
    expect(crashed).toMatchObject({ status: 'interrupted' });
    await store.close();
    const before = ledgerRows(path);
    expect(before.length).toBeGreaterThan(0);
    toRowidLedger(path, 5);

    const migrated = new SqliteRunStore(path);
    const resumed = await counter(migrated, 'second', new FakeClock(START_MS + 600_000)).resume('ledger');
    expect(resumed).toMatchObject({ status: 'completed', output: 'done' });
    await migrated.close();
    const after = new Database(path);
    expect(after.prepare('SELECT version FROM keel_schema').pluck().get()).toBe(6);
    expect(after.prepare("SELECT sql FROM sqlite_schema WHERE name = 'ledger'").pluck().get()).toMatch(
      /WITHOUT ROWID/,
    );
    after.close();
    // The entries written before the migration are there as they were, beside the ones the resumed run added.
    const rows = ledgerRows(path);
    for (const row of before) expect(rows).toContainEqual(row);
    expect(rows.length).toBe(4);
  });
});
