import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agent,
  agentTool,
  type JsonValue,
  type ModelProvider,
  type ModelResponse,
  type Tool,
  tool,
} from '@keel/core';
import type { CheckpointWrite } from '@keel/core/store';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from './sqlite-run-store.js';

// What a write costs in rows and index pages: a run's input of 1,000 messages is one row (one statement, not 1,000), a
// rewrite into that row keeps the messages before it, and a checkpoint that keeps the run's status leaves the status
// index alone.

const directory = mkdtempSync(join(tmpdir(), 'keel-sqlite-cost-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const NOW_MS = 1_700_000_000_000;

const message = (content: string): JsonValue => ({ role: 'user', content });

function checkpointAt(
  expectedVersion: number,
  start: number,
  contents: string[],
  status: CheckpointWrite['status'] = 'running',
): CheckpointWrite {
  const messages = contents.map(message);
  return {
    expectedVersion,
    owner: 'owner-a',
    status,
    schemaVersion: 1,
    nowMs: NOW_MS + expectedVersion,
    state: { step: expectedVersion, messages: start + messages.length },
    messages: { start, messages },
  };
}

async function createdWith(store: SqliteRunStore, runId: string, contents: string[]): Promise<void> {
  await store.createRun({
    runId,
    agentName: 'cost',
    status: 'running',
    schemaVersion: 1,
    state: { step: 0, messages: contents.length },
    messages: { start: 0, messages: contents.map(message) },
    createdAtMs: NOW_MS,
    lease: { owner: 'owner-a', expiresAtMs: NOW_MS + 60_000 },
  });
}

const contentsOf = async (store: SqliteRunStore, runId: string) =>
  ((await store.loadRun(runId))!.state as { messages: Array<{ content: string }> }).messages.map(
    (entry) => entry.content,
  );

describe('SqliteRunStore write cost', () => {
  it("stores a run's input of 1,000 messages as one row, and a rewrite into it keeps the messages before", async () => {
    const path = join(directory, 'input.db');
    const store = new SqliteRunStore(path);
    const input = Array.from({ length: 1_000 }, (_, index) => `m${index}`);
    await createdWith(store, 'long', input);
    const reader = new Database(path, { readonly: true });
    const rows = () =>
      reader.prepare("SELECT count(*) FROM run_messages WHERE run_id = 'long'").pluck().get();
    expect(rows()).toBe(1);
    expect(await contentsOf(store, 'long')).toEqual(input);
    // Appended after it: a row per write.
    await store.saveCheckpoint('long', checkpointAt(1, 1_000, ['a', 'b']));
    expect(rows()).toBe(2);
    expect(await contentsOf(store, 'long')).toEqual([...input, 'a', 'b']);
    // A conversation manager kept the first 500 and summarised the rest.
    await store.saveCheckpoint('long', checkpointAt(2, 500, ['summary']));
    expect(await contentsOf(store, 'long')).toEqual([...input.slice(0, 500), 'summary']);
    expect((await store.loadRun('long'))?.messageCount).toBe(501);
    await store.saveCheckpoint('long', checkpointAt(3, 501, ['c']));
    expect(await contentsOf(store, 'long')).toEqual([...input.slice(0, 500), 'summary', 'c']);
    reader.close();
    await store.close();
  });

  it("leaves the status index alone on a checkpoint that keeps the run's status, and moves it on a status change", async () => {
    const path = join(directory, 'status.db');
    const store = new SqliteRunStore(path);
    await createdWith(store, 'steady', ['go']);
    const database = (store as unknown as { database: Database.Database }).database;
    // Every write from here on stays in the WAL file, a frame per page written.
    database.pragma('wal_autocheckpoint = 0');
    database.pragma('wal_checkpoint(TRUNCATE)');
    await store.saveCheckpoint('steady', checkpointAt(1, 1, ['a']));
    await store.saveCheckpoint('steady', checkpointAt(2, 2, ['b']));
    const statusIndex = new Set(
      database.prepare("SELECT pageno FROM dbstat WHERE name = 'runs_by_status'").pluck().all() as number[],
    );
    expect(statusIndex.size).toBeGreaterThan(0);
    expect(walFramePages(`${path}-wal`).filter((page) => statusIndex.has(page))).toEqual([]);
    // The run's end moves it in the index.
    await store.saveCheckpoint('steady', checkpointAt(3, 3, ['done'], 'completed'));
    expect(walFramePages(`${path}-wal`).filter((page) => statusIndex.has(page)).length).toBeGreaterThan(0);
    expect((await store.loadRun('steady'))?.status).toBe('completed');
    expect((await store.listRuns({ status: 'completed' })).map((run) => run.runId)).toEqual(['steady']);
    expect(await store.listRuns({ status: 'running' })).toEqual([]);
    await store.close();
  });
});

describe('SqliteRunStore write cost of a child run', () => {
  it('creates a child run that answers at once with its end: one transaction more than a plain tool call', async () => {
    const path = join(directory, 'child.db');
    const store = new SqliteRunStore(path);
    const usage = { inputTokens: 1, outputTokens: 1 };
    // Calls `work` once, then answers; a conversation without tools is answered at once.
    const model: ModelProvider = {
      provider: 'cost',
      model: 'instant',
      async generate(request): Promise<ModelResponse> {
        const answered = request.tools === undefined || request.tools.length === 0;
        if (answered || request.messages.at(-1)?.role === 'tool')
          return { content: 'done', toolCalls: [], finishReason: 'stop', usage, model: 'instant' };
        const call = { id: 'call_1', name: 'work', arguments: '{"prompt":"go"}' };
        return { content: '', toolCalls: [call], finishReason: 'tool_calls', usage, model: 'instant' };
      },
    };
    const input = {
      type: 'object',
      properties: { prompt: { type: 'string' } },
      required: ['prompt'],
    } as const;
    const plain = tool({ name: 'work', description: 'works', input, execute: () => 'done' });
    const child = agent({ name: 'child', model, store });
    const composed = agentTool(child, { name: 'work', description: 'a child agent works' });
    const database = (store as unknown as { database: Database.Database }).database;
    database.pragma('wal_autocheckpoint = 0');
    const commitsOf = async (work: Tool): Promise<number> => {
      database.pragma('wal_checkpoint(TRUNCATE)');
      const result = await agent({ name: 'parent', model, tools: [work], store }).run('go');
      expect(result.status).toBe('completed');
      return walCommits(`${path}-wal`);
    };
    const plainCommits = await commitsOf(plain);
    expect(await commitsOf(composed)).toBe(plainCommits + 1);
    const childRun = (await store.listRuns({ limit: 10 })).find((run) => run.agentName === 'child');
    expect(childRun).toMatchObject({ status: 'completed', version: 1 });
    expect(childRun?.lease).toBeUndefined();
    await store.close();
  });
});

/** The number of commits in a WAL file: frames whose header holds the database's size after the commit. */
function walCommits(walPath: string): number {
  const wal = readFileSync(walPath);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize)
    if (wal.readUInt32BE(offset + 4) !== 0) commits++;
  return commits;
}

/** The page numbers of the frames in a WAL file (a 32-byte header, then frames of a 24-byte header and a page). */
function walFramePages(walPath: string): number[] {
  const wal = readFileSync(walPath);
  if (wal.length < 32) return [];
  const pageSize = wal.readUInt32BE(8);
  const pages: number[] = [];
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize)
    pages.push(wal.readUInt32BE(offset));
  return pages;
}
