// The fleet test: `keel worker` processes (the built CLI) against a real Redis of this test's own and the real
// PostgreSQL, 200 submitted runs of an agent whose tool has a side effect (a line in .keel/outbox.jsonl), models on
// the simulated provider with faults, workers SIGKILLed at seeded moments and started again, a few runs cancelled.
// An operator decides calls that may have run as the crash test does (the outbox says whether the effect happened).
// Every run must end in a typed state, no effect may happen twice, and no completed step may be lost.
// Larger runs: KEEL_FLEET_RUNS=1000 KEEL_FLEET_KILLS=30 npx vitest run packages/cli/src/commands/worker/fleet.test.ts
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type LedgerEntry,
  migrateRunState,
  type RunRecord,
  type RunState,
  readQueuedState,
} from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { runQueue } from '@keel/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisInstance, startRedis } from '../../../../../scripts/redis.js';
import { freeLoopbackPort } from '../../../../../scripts/test-services.js';
import { fleetSettings, fleetTask, seededRandom } from '../../test-support/fleet-plan.js';
import { FleetProcess, type WorkerLine } from '../../test-support/fleet-process.js';
import { KEEL_BINARY } from '../../test-support/keel-cli.js';

const postgresUrl = process.env.KEEL_TEST_POSTGRES_URL;
if (postgresUrl === undefined)
  throw new Error('KEEL_TEST_POSTGRES_URL is not set: the vitest global setup starts PostgreSQL');
const settings = fleetSettings(process.env);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const FAULTS = 'rate_limit=0.08,server_error=0.05,reset=0.03,retry_after_ms=40';
// Generous: the machine may be shared. The test ends as soon as every run has.
const DEADLINE_MS = 150_000 + settings.runs * 300;

describe('a fleet of keel workers on Redis and PostgreSQL', () => {
  let redis: RedisInstance;
  let directory: string;
  beforeAll(async () => {
    if (!existsSync(join(KEEL_BINARY, '..', '..', 'dist', 'main.js'))) {
      throw new Error('the CLI is not built: run npm run build first');
    }
    redis = await startRedis(await freeLoopbackPort());
    directory = mkdtempSync(join(tmpdir(), 'keel-fleet-'));
  }, 120_000);
  afterAll(async () => {
    await redis?.stop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  }, 30_000);

  it(
    `runs ${settings.runs} runs over ${settings.workers} workers killed ${settings.kills} times: typed ends, effects once, no step lost`,
    async () => {
      const random = seededRandom(settings.seed);
      const agentName = `fleet-${process.pid}-${Date.now().toString(36)}`;
      writeFileSync(
        join(directory, 'fleet.yaml'),
        `name: ${agentName}\ntools: [create_ticket, get_weather]\n`,
      );
      const lines: WorkerLine[] = [];
      const workers = Array.from(
        { length: settings.workers },
        (_, index) =>
          new FleetProcess(
            index,
            (generation) => [
              'worker',
              'fleet.yaml',
              '--store',
              postgresUrl,
              '--redis',
              redis.url,
              '--concurrency',
              String(settings.concurrency),
              '--lease-ttl-ms',
              String(settings.leaseTtlMs),
              '--faults',
              FAULTS,
              '--seed',
              String(settings.seed * 1_000 + index * 100 + generation),
              '--json',
            ],
            directory,
            (line) => lines.push(line),
          ),
      );
      const store = new PostgresRunStore({ connectionString: postgresUrl });
      const queue = runQueue({ store, redis: redis.url });
      const startedMs = Date.now();
      const kills: string[] = [];
      const decided = new Map<string, 'execute' | 'abandon'>();
      // The version each interrupted run was answered at: it is answered again only once it moved on.
      const answeredAt = new Map<string, number>();
      const cancelled = new Set<string>();
      try {
        for (const worker of workers) worker.start();
        const runIds: string[] = [];
        for (let first = 0; first < settings.runs; first += 25) {
          const batch = Array.from({ length: Math.min(25, settings.runs - first) }, (_, offset) =>
            queue.submit(agentName, fleetTask(first + offset)).then((submitted) => submitted.runId),
          );
          runIds.push(...(await Promise.all(batch)));
        }
        const toCancel = new Set(runIds.filter(() => random.next() < 0.04));

        // Kills at seeded moments: a worker dies once it has printed a seeded number of lines (so it is busy with
        // runs), and starts again a seeded while later.
        let settled = false;
        const chaos = (async () => {
          for (let kill = 0; kill < settings.kills && !settled; kill++) {
            const worker = workers[random.integer(0, workers.length - 1)]!;
            const afterLines = random.integer(2, 2 * settings.concurrency);
            while (worker.lines < afterLines && !settled) await sleep(5);
            if (settled) break;
            kills.push(`worker ${worker.index}.${worker.generation} after ${worker.lines} lines`);
            await worker.kill();
            await sleep(random.integer(50, 400));
            worker.start();
          }
        })();

        // The operator: cancels a few runs along the way, and decides calls that may have run.
        const ours = async (status: 'queued' | 'running' | 'interrupted') =>
          (await store.listRuns({ status, limit: 10_000 })).filter((run) => run.agentName === agentName);
        let open = runIds.length;
        while (open > 0 && Date.now() - startedMs < DEADLINE_MS) {
          await sleep(250);
          for (const runId of toCancel) {
            if (cancelled.has(runId) || random.next() > 0.05) continue;
            cancelled.add(runId);
            await queue.cancel(runId, 'the customer hung up');
          }
          const interrupted = await ours('interrupted');
          for (const summary of interrupted) {
            const record = await store.loadRun(summary.runId);
            if (record?.status === 'interrupted') await decide(record);
          }
          open = (await ours('queued')).length + (await ours('running')).length + interrupted.length;
        }
        settled = true;
        await chaos;
        const unfinished = (await Promise.all(runIds.map((runId) => store.loadRun(runId)))).filter(
          (record) => record === undefined || !TERMINAL.has(record.status),
        );
        expect(
          unfinished.map(
            (record) => `${record?.runId} ${record?.status} lease ${JSON.stringify(record?.lease)}`,
          ),
          `runs not ended after ${DEADLINE_MS} ms; kills: ${kills.join(', ')}; stderr: ${workers.map((worker) => worker.stderr).join('\n')}`,
        ).toEqual([]);

        // Every effect once, every effect known to the ledger, every completed call in its run's final state.
        const effects = outboxKeys(directory);
        const duplicated = [...effects].filter(([, count]) => count > 1);
        expect(duplicated, 'side effects that happened twice').toEqual([]);
        const lost: string[] = [];
        const statuses = new Map<string, number>();
        for (const runId of runIds) {
          const record = (await store.loadRun(runId))!;
          statuses.set(record.status, (statuses.get(record.status) ?? 0) + 1);
          expect(TERMINAL.has(record.status), `${runId} ended ${record.status}`).toBe(true);
          const ledger = await store.ledger(runId);
          lost.push(...lostSteps(record, ledger, effects));
        }
        expect(lost, 'completed steps lost, or effects the ledger does not know').toEqual([]);
        for (const [key] of effects) expect(runIds.some((runId) => key.startsWith(`${runId}:`))).toBe(true);

        // The kills landed on busy workers: their runs were taken over by another process (resumed from a
        // checkpoint, or started again when none was written yet).
        const resumed = lines.filter((line) => line.type === 'run-resumed');
        const takers = new Map<string, Set<string>>();
        for (const line of lines.filter((entry) => entry.type === 'run-taken')) {
          const runTakers = takers.get(line.runId!) ?? new Set<string>();
          takers.set(line.runId!, runTakers.add(`${line.worker}.${line.generation}`));
        }
        const takenOver = [...takers.values()].filter((runTakers) => runTakers.size > 1).length;
        if (settings.kills > 0) expect(takenOver, `kills: ${kills.join(', ')}`).toBeGreaterThan(0);
        const summary =
          `${settings.runs} runs (${[...statuses].map(([status, count]) => `${count} ${status}`).join(', ')}), ` +
          `${settings.workers} workers, ${kills.length} kills, ${takenOver} runs taken over, ${resumed.length} resumes, ` +
          `${lines.filter((line) => line.type === 'run-requeued').length} hand-backs, ${decided.size} decisions ` +
          `(${[...decided.values()].filter((decision) => decision === 'abandon').length} abandoned), ` +
          `${cancelled.size} cancellations asked, ${effects.size} effects, 0 duplicated, 0 lost, ` +
          `${((Date.now() - startedMs) / 1_000).toFixed(1)} s`;
        console.log(`fleet: ${summary}`);
      } finally {
        await Promise.all(workers.map((worker) => worker.stop()));
        await queue.close();
        await store.close();
      }

      /** Decides an interrupted run's calls as an operator would: the outbox says whether each effect happened. */
      async function decide(record: RunRecord): Promise<void> {
        if ((answeredAt.get(record.runId) ?? 0) >= record.version) return;
        const state = migrateRunState(record.state, record.runId);
        const decisions: Record<string, 'execute' | 'abandon'> = {};
        const effects = outboxKeys(directory);
        for (const entry of state.pendingDecisions) {
          if (entry.kind !== 'uncertain') continue;
          decisions[entry.idempotencyKey] = effects.has(entry.idempotencyKey) ? 'abandon' : 'execute';
        }
        if (Object.keys(decisions).length === 0) return;
        try {
          await queue.answer(record.runId, { decisions });
          answeredAt.set(record.runId, record.version);
          for (const [key, decision] of Object.entries(decisions)) decided.set(key, decision);
        } catch {
          // The run moved on meanwhile (cancelled, say): the next look decides again.
        }
      }
    },
    DEADLINE_MS + 60_000,
  );
});

/** Idempotency keys in the outbox, with how often each effect happened. */
function outboxKeys(directory: string): Map<string, number> {
  const path = join(directory, '.keel', 'outbox.jsonl');
  const counts = new Map<string, number>();
  if (!existsSync(path)) return counts;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const key = (JSON.parse(line) as { idempotencyKey: string }).idempotencyKey;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // A line cut by SIGKILL while it was written: its effect did not complete.
    }
  }
  return counts;
}

/**
 * What a run lost: a completed ledger call whose result is not in the run's final conversation, or an effect the
 * ledger does not hold as completed (a call that ran, unknown to the run).
 */
function lostSteps(record: RunRecord, ledger: LedgerEntry[], effects: Map<string, number>): string[] {
  const lost: string[] = [];
  // Cancelled before any worker took it: nothing ran.
  if (readQueuedState(record.state) !== undefined) {
    return record.status === 'cancelled' && ledger.length === 0
      ? []
      : [`${record.runId}: ${record.status} unstarted`];
  }
  const state: RunState = migrateRunState(record.state, record.runId);
  const answered = new Set(
    state.messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
  );
  const assistants = state.messages.filter((message) => message.role === 'assistant');
  for (const entry of ledger) {
    if (entry.status !== 'completed') continue;
    const call = assistants[entry.step - 1]?.toolCalls?.[entry.callIndex];
    // A run cancelled mid-step keeps the ledger of a call the conversation never got to.
    if (call === undefined || !answered.has(call.id)) {
      if (record.status !== 'cancelled')
        lost.push(`${entry.idempotencyKey}: completed, not in the conversation`);
    }
  }
  for (const [key] of effects) {
    if (!key.startsWith(`${record.runId}:`)) continue;
    const entry = ledger.find((candidate) => candidate.idempotencyKey === key);
    if (entry?.status !== 'completed' && record.status !== 'cancelled')
      lost.push(`${key}: effect unknown to the ledger`);
  }
  return lost;
}
