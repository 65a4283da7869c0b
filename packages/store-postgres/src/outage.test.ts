// PostgreSQL goes down in the middle of durable runs and comes back: the runs pause, then resume to completion, and
// nothing runs twice or is lost. The test starts a private PostgreSQL of its own (a free loopback port, its own data
// directory), so that stopping it disturbs no other test and no leftover instance or parallel suite collides with it.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agent, type RunResult, tool } from '@keel/core';
import { FakeClock, scriptedModel } from '@keel/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../../scripts/test-services.js';
import { PostgresRunStore } from './postgres-run-store.js';

const script = fileURLToPath(new URL('../../../scripts/postgres.sh', import.meta.url));
// Not created here: postgres.sh creates it and hands it to the postgres user. The `keel-postgres-test-<pid>-` prefix
// lets the global setup remove it should this process die before its `afterAll`.
const dataDirectory = join(tmpdir(), `keel-postgres-test-${process.pid}-outage-${randomUUID().slice(0, 8)}`);
let port = '';

function postgres(action: 'start' | 'stop'): string {
  return execFileSync('bash', [script, action, port], {
    encoding: 'utf8',
    env: { ...process.env, KEEL_POSTGRES_DIR: dataDirectory },
  });
}

let url: string;
beforeAll(async () => {
  port = String(await freeLoopbackPort());
  url = postgres('start').trim().split('\n').at(-1)!;
}, 120_000);
afterAll(() => {
  try {
    if (port !== '') postgres('stop');
  } finally {
    rmSync(dataDirectory, { recursive: true, force: true });
  }
}, 60_000);

it('pauses runs when PostgreSQL stops, and resumes them to completion once it is back', async () => {
  const store = new PostgresRunStore({ connectionString: url, connectTimeoutMs: 2_000, maxConnections: 8 });
  const runIds = Array.from(
    { length: 6 },
    (_, index) => `outage-${process.pid}-${Date.now().toString(36)}-${index}`,
  );
  const effects: string[] = [];
  let stopped = false;
  // Runs whose record exists (they made a call): the database goes down only once all of them do, so that no run's
  // creation meets the outage, however the machine schedules them.
  const started = new Set<string>();
  let everyRunStarted = () => {};
  const allStarted = new Promise<void>((resolve) => {
    everyRunStarted = resolve;
  });
  const charge = tool({
    name: 'charge',
    description: 'Charges the card (not idempotent)',
    input: {
      type: 'object',
      properties: { amountCents: { type: 'integer' } },
      required: ['amountCents'],
    } as const,
    execute: async ({ amountCents }: { amountCents: number }, context) => {
      effects.push(context.idempotencyKey);
      started.add(context.idempotencyKey.split(':')[0]!);
      if (started.size === runIds.length) everyRunStarted();
      // The first run's second step takes the database down, while every run is in flight.
      if (!stopped && context.idempotencyKey === `${runIds[0]}:2:0`) {
        stopped = true;
        await allStarted;
        postgres('stop');
      }
      return { charged: amountCents };
    },
  });
  const model = scriptedModel((request) => {
    const step = request.messages.filter((message) => message.role === 'assistant').length;
    return step < 3
      ? { toolCalls: [{ name: 'charge', arguments: { amountCents: (step + 1) * 100 } }] }
      : { content: 'done' };
  });
  const assistant = agent({
    name: 'outage',
    model,
    tools: [charge],
    clock: new FakeClock(),
    store,
    durability: { owner: 'worker', storeMaxAttempts: 1 },
  });

  const first = await Promise.all(runIds.map((runId) => assistant.run('Charge three times', { runId })));
  expect(stopped).toBe(true);
  const paused = first.filter((result) => result.status === 'interrupted');
  expect(paused.length).toBeGreaterThanOrEqual(1);
  for (const result of paused) {
    expect(result).toMatchObject({ stopReason: 'store_unavailable', resumable: true });
    expect(result.error?.code).toBe('store.unavailable');
  }
  expect(first.every((result) => result.status === 'completed' || result.status === 'interrupted')).toBe(
    true,
  );

  postgres('start');
  const finals = new Map<string, RunResult>();
  for (const result of first) finals.set(result.runId, result);
  for (const { runId } of paused) {
    let resumed = await assistant.resume(runId);
    if (resumed.stopReason === 'decision_required') {
      const decisions: Record<string, 'execute' | 'abandon'> = {};
      // The call ran or not: the side-effect log says which (a user would check the payment provider).
      for (const pending of resumed.pending ?? []) {
        decisions[pending.idempotencyKey] = effects.includes(pending.idempotencyKey) ? 'abandon' : 'execute';
      }
      resumed = await assistant.resume(runId, { decisions });
    }
    finals.set(runId, resumed);
  }

  for (const runId of runIds) {
    expect(finals.get(runId), runId).toMatchObject({ status: 'completed', output: 'done' });
    const record = await store.loadRun(runId);
    expect(record?.status).toBe('completed');
    const ledger = await store.ledger(runId);
    expect(ledger.map((entry) => [entry.idempotencyKey, entry.status])).toEqual(
      [1, 2, 3].map((step) => [`${runId}:${step}:0`, 'completed']),
    );
    // Nothing lost: every step's charge happened; nothing twice: none happened more than once.
    for (const step of [1, 2, 3]) {
      expect(
        effects.filter((key) => key === `${runId}:${step}:0`),
        `${runId} step ${step}`,
      ).toHaveLength(1);
    }
  }
  expect(effects).toHaveLength(runIds.length * 3);
  await store.close();
}, 60_000);
