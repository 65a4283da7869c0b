// The dashboard over PostgreSQL, the store for fleets: a private database on the test server, runs made by keel's
// run loop (one submitted and waiting, one held by a worker), read through the API, and changes seen by polling.
import { queuedRun } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeFeed, type StoreChange } from './change-feed.js';
import { type Dashboard, startDashboard } from './dashboard.js';
import { send } from './test-support/http.js';
import { fallbackRun, interruptedRun, runHeldByWorker } from './test-support/runs.js';

const url = process.env.KEEL_TEST_POSTGRES_URL;
if (url === undefined)
  throw new Error('KEEL_TEST_POSTGRES_URL is not set: the vitest global setup starts PostgreSQL');
const databaseName = `keel_dashboard_test_${process.pid}`;
const databaseUrl = url.replace(/\/[^/]*$/, `/${databaseName}`);

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

let store: PostgresRunStore;
let dashboard: Dashboard;
const headers = () => ({ authorization: `Bearer ${dashboard.token}` });

beforeAll(async () => {
  await admin(`DROP DATABASE IF EXISTS ${databaseName}`);
  await admin(`CREATE DATABASE ${databaseName}`);
  store = new PostgresRunStore({ connectionString: databaseUrl, maxConnections: 4 });
  dashboard = await startDashboard({ store, port: 0 });
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  await store?.close();
  await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
}, 30_000);

describe('the dashboard on PostgreSQL', () => {
  it('lists runs with their figures and shows a run with its timeline', async () => {
    const fellBack = await fallbackRun(store);
    const { runId: waiting } = await interruptedRun(store, { title: 'printer on fire' });
    const list = JSON.parse((await send(dashboard.url, '/api/runs', { headers: headers() })).body);
    expect(list.runs.map((run: { runId: string }) => run.runId)).toEqual([waiting, fellBack]);
    expect(list.runs[1]).toMatchObject({ status: 'completed', requests: 4, retries: 1, fallbacks: 1 });
    expect(list.runs[0]).toMatchObject({
      status: 'interrupted',
      stopReason: 'approval_required',
      pendingDecisions: 1,
    });
    const filtered = JSON.parse(
      (await send(dashboard.url, '/api/runs?status=interrupted', { headers: headers() })).body,
    );
    expect(filtered.runs.map((run: { runId: string }) => run.runId)).toEqual([waiting]);
    const view = JSON.parse(
      (await send(dashboard.url, `/api/runs/${fellBack}`, { headers: headers() })).body,
    );
    expect(view.timeline.entries.map((entry: { lane: string }) => entry.lane)).toEqual(
      expect.arrayContaining(['model', 'retry', 'fallback', 'tool']),
    );
    expect(view.ledger).toHaveLength(1);
  });

  it('lists a queued run as queued, and the worker holding a running run', async () => {
    await store.createRun(
      queuedRun({ runId: 'pg-queued', agentName: 'support', input: 'Refund order 42', nowMs: Date.now() }),
    );
    const held = await runHeldByWorker(store, {
      owner: 'host-d:99:0badcafe',
      task: 'When does order 42 ship?',
      submittedAtMs: Date.now() - 1_000,
    });
    try {
      const queued = JSON.parse(
        (await send(dashboard.url, '/api/runs?status=queued', { headers: headers() })).body,
      );
      expect(queued.runs).toEqual([
        expect.objectContaining({ runId: 'pg-queued', status: 'queued', task: 'Refund order 42' }),
      ]);
      expect(queued.runs[0]).not.toHaveProperty('problem');
      const view = JSON.parse(
        (await send(dashboard.url, '/api/runs/pg-queued', { headers: headers() })).body,
      );
      expect(view.timeline.entries).toEqual([
        expect.objectContaining({ lane: 'queue', label: 'queued: waits for a worker', outcome: 'waiting' }),
      ]);
      const running = JSON.parse(
        (await send(dashboard.url, '/api/runs?status=running', { headers: headers() })).body,
      );
      expect(running.runs).toEqual([
        expect.objectContaining({
          runId: held.runId,
          worker: expect.objectContaining({ owner: 'host-d:99:0badcafe', leaseEnded: false }),
        }),
      ]);
    } finally {
      held.release();
    }
    expect((await held.finished).status).toBe('completed');
  });

  it('sees a new run by polling the store', async () => {
    const feed = new ChangeFeed(store, 20, 100);
    const changes: StoreChange[] = [];
    let seen!: (runIds: string[]) => void;
    const moved = new Promise<string[]>((resolve) => {
      seen = resolve;
    });
    const ready = new Promise<void>((resolve) => {
      feed.subscribe((change) => {
        changes.push(change);
        if (change.kind === 'ready') resolve();
        if (change.kind === 'runs') seen(change.runIds);
      });
    });
    try {
      await ready;
      const runId = await fallbackRun(store);
      expect(await moved).toContain(runId);
      expect(changes.filter((change) => change.kind === 'error')).toEqual([]);
    } finally {
      feed.close();
    }
  });
});
