// The dashboard over a fleet's runs in a real SQLite file, through its HTTP server: a run submitted as
// `runQueue().submit` stores it (queued, its record holding only the input), and a run a worker holds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queuedRun } from '@keel/core';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, startDashboard } from './dashboard.js';
import { send } from './test-support/http.js';
import { runHeldByWorker } from './test-support/runs.js';

const SUBMITTED_AT_MS = Date.parse('2025-06-01T12:00:00Z');
const NOW_MS = SUBMITTED_AT_MS + 90_000;
/** The dashboard's clock. */
let nowMs = NOW_MS;

let directory: string;
let store: SqliteRunStore;
let dashboard: Dashboard;
const get = async (path: string) => {
  const response = await send(dashboard.url, path, {
    headers: { authorization: `Bearer ${dashboard.token}` },
  });
  return { status: response.status, body: JSON.parse(response.body) };
};

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'keel-dashboard-fleet-'));
  store = new SqliteRunStore(join(directory, 'keel.db'));
  await store.createRun(
    queuedRun({ runId: 'queued-1', agentName: 'support', input: 'Refund order 42', nowMs: SUBMITTED_AT_MS }),
  );
  dashboard = await startDashboard({ store, port: 0, now: () => nowMs });
});

afterAll(async () => {
  await dashboard?.close();
  await store?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('a queued run', () => {
  it('is listed under the queued filter, with its task and how long it has waited', async () => {
    const { status, body } = await get('/api/runs?status=queued');
    expect(status).toBe(200);
    expect(body.runs).toEqual([
      {
        runId: 'queued-1',
        agentName: 'support',
        status: 'queued',
        version: 1,
        createdAtMs: SUBMITTED_AT_MS,
        updatedAtMs: SUBMITTED_AT_MS,
        task: 'Refund order 42',
        queuedMs: 90_000,
      },
    ]);
    const refused = await get('/api/runs?status=waiting');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/status must be one of queued, running, /);
  });

  it('has a page: its input, and a timeline that waits for a worker', async () => {
    const { status, body } = await get('/api/runs/queued-1');
    expect(status).toBe(200);
    expect(body.run).toMatchObject({ status: 'queued', agentName: 'support', queuedMs: 90_000 });
    expect(body.run).not.toHaveProperty('problem');
    expect(body.queued).toEqual({ submittedAtMs: SUBMITTED_AT_MS });
    expect(body.messages).toEqual([{ role: 'user', content: 'Refund order 42' }]);
    expect(body.pendingDecisions).toEqual([]);
    expect(body).not.toHaveProperty('report');
    expect(body.timeline).toEqual({
      startedAtMs: SUBMITTED_AT_MS,
      durationMs: 90_000,
      entries: [
        {
          lane: 'queue',
          label: 'queued: waits for a worker',
          detail: 'agent support',
          startMs: 0,
          endMs: 90_000,
          timing: 'exact',
          outcome: 'waiting',
        },
      ],
      notes: [
        expect.stringMatching(/a worker serving agent support \(keel worker\) takes it from the queue/),
      ],
    });
  });

  it('waits for no decision', async () => {
    const response = await send(dashboard.url, '/api/runs/queued-1/decisions', {
      method: 'POST',
      headers: { authorization: `Bearer ${dashboard.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ answers: [] }),
    });
    expect(response.status).toBe(409);
    expect(JSON.parse(response.body).error.message).toMatch(/is queued: it waits for no decision/);
  });
});

describe('a run a worker holds', () => {
  it('names the worker in the list and on its page, and its wait in the queue on the timeline', async () => {
    nowMs = Date.now();
    const held = await runHeldByWorker(store, {
      owner: 'host-b:31337:feedc0de',
      task: 'When does order 42 ship?',
      submittedAtMs: Date.now() - 2_000,
    });
    try {
      const lease = (await store.loadRun(held.runId))!.lease!;
      const list = await get('/api/runs?status=running');
      expect(list.body.runs).toEqual([
        expect.objectContaining({
          runId: held.runId,
          task: 'When does order 42 ship?',
          worker: { owner: 'host-b:31337:feedc0de', leaseExpiresAtMs: lease.expiresAtMs, leaseEnded: false },
        }),
      ]);
      const page = await get(`/api/runs/${held.runId}`);
      expect(page.body.run.worker.owner).toBe('host-b:31337:feedc0de');
      const [queue, run] = page.body.timeline.entries;
      expect(queue).toMatchObject({ lane: 'queue', label: 'queued: waited for a worker', startMs: 0 });
      expect(queue.endMs).toBeGreaterThanOrEqual(2_000);
      expect(run).toMatchObject({ lane: 'run', label: 'run running', startMs: queue.endMs });
      nowMs = lease.expiresAtMs;
      const [lapsed] = (await get('/api/runs?status=running')).body.runs;
      expect(lapsed.worker).toMatchObject({ owner: 'host-b:31337:feedc0de', leaseEnded: true });
    } finally {
      held.release();
    }
    expect((await held.finished).status).toBe('completed');
    const ended = await get(`/api/runs/${held.runId}`);
    expect(ended.body.run).toMatchObject({ status: 'completed', queuedMs: expect.any(Number) });
    expect(ended.body.run).not.toHaveProperty('worker');
  });
});
