// Issue 4's crash test: real child processes run durable agents whose tools append their idempotency key to a file;
// the test SIGKILLs them at seeded moments, resumes every run to its end, and checks the file and the store.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../sqlite-run-store.js';
import { type DriveResult, driveRun, readEffects } from './crash-harness.js';
import { crashSettings } from './crash-settings.js';
import { lostSteps, type StoredState } from './crash-steps.js';
import { seededRandom, seedOf } from './prng.js';

const CHILD_PATH = fileURLToPath(new URL('../../dist/crash/crash-child.js', import.meta.url));
// KEEL_CRASH_RUNS, KEEL_CRASH_KILLS, KEEL_CRASH_SEED, KEEL_CRASH_PARALLEL; CI runs the defaults: 40 runs, 200 kills.
const {
  seed: SEED,
  runs: RUNS,
  minKills: MIN_KILLS,
  parallel: PARALLEL_CHILDREN,
} = crashSettings(process.env);
// 40 runs took 116 s alone on a quiet 2-core machine, and over 240 s beside the rest of the suite under load:
// 12 s a run leaves room for a loaded machine (the limit only bounds a hang).
const TIMEOUT_MS = Math.max(480_000, 12_000 * RUNS, 2_000 * MIN_KILLS);
// Every HANDOVER_EVERY-th run is resumed by a new owner after each kill (a new worker taking over): it must wait for
// the dead owner's lease, whose TTL is short so that the wait stays small.
const HANDOVER_EVERY = 4;
const HANDOVER_LEASE_TTL_MS = 200;

/**
 * Drives RUNS runs, PARALLEL_CHILDREN at once, and more while the kills so far fall short of MIN_KILLS (a run that
 * ends early leaves some of its kills unspent), up to RUNS + MIN_KILLS runs in all. A run's plan and kill moments come
 * from the seed and its index alone, so the schedule does not depend on which run finishes first.
 */
async function driveRuns(paths: { databasePath: string; effectsPath: string }): Promise<DriveResult[]> {
  const drives: DriveResult[] = [];
  let kills = 0;
  let next = 0;
  const worker = async () => {
    while (next < RUNS || (kills < MIN_KILLS && next < RUNS + MIN_KILLS)) {
      const index = next++;
      const random = seededRandom(seedOf(`${SEED}/${index}`));
      drives[index] = await driveRun({
        childPath: CHILD_PATH,
        ...paths,
        runId: `crash-${SEED}-${index}`,
        random,
        maxKills: random.integer(6, 10),
        maxKillLine: 10,
        onKill: () => {
          kills++;
        },
        ...(index % HANDOVER_EVERY === 1 ? { handover: { leaseTtlMs: HANDOVER_LEASE_TTL_MS } } : {}),
      });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CHILDREN }, worker));
  return drives;
}

function tally(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => `${value} ${count}`).join(', ');
}

describe('crash test (SIGKILL at seeded moments, resume to the end)', () => {
  it(
    'never executes a non-idempotent side effect twice, loses no completed step, ends every run',
    async () => {
      expect(existsSync(CHILD_PATH), `build first (npx tsc -b tsconfig.build.json): ${CHILD_PATH}`).toBe(
        true,
      );
      const directory = mkdtempSync(join(tmpdir(), 'keel-crash-'));
      const databasePath = join(directory, 'keel.db');
      const effectsPath = join(directory, 'effects.log');
      const startedMs = performance.now();
      const drives = await driveRuns({ databasePath, effectsPath });

      const effects = readEffects(effectsPath);
      const store = new SqliteRunStore(databasePath);
      const problems: string[] = [];
      const statuses: string[] = [];
      let completedCalls = 0;
      let ledgerWithoutEffect = 0;
      const ledgerKeys = new Set<string>();
      try {
        for (const drive of drives) {
          const record = await store.loadRun(drive.runId);
          if (record === undefined) {
            problems.push(`${drive.runId}: not in the store`);
            continue;
          }
          statuses.push(record.status);
          if (record.status !== drive.result.status)
            problems.push(`${drive.runId}: stored ${record.status}, the child said ${drive.result.status}`);
          const ledger = await store.ledger(drive.runId);
          for (const entry of ledger) {
            ledgerKeys.add(entry.idempotencyKey);
            if (entry.status !== 'completed') continue;
            completedCalls++;
            if (!effects.has(entry.idempotencyKey)) ledgerWithoutEffect++;
          }
          problems.push(
            ...lostSteps(
              drive.runId,
              drive.decisions,
              record.state as unknown as StoredState,
              ledger,
              effects,
            ),
          );
        }
      } finally {
        await store.close();
      }
      const duplicates = [...effects].filter(([, effect]) => !effect.idempotent && effect.count > 1);
      const idempotentRepeats = [...effects].filter(
        ([, effect]) => effect.idempotent && effect.count > 1,
      ).length;
      // A call is recorded as started before it runs: an effect the ledger never heard of ran unrecorded.
      const effectsWithoutLedger = [...effects.keys()].filter((key) => !ledgerKeys.has(key));
      const modelRepeats = drives.flatMap((drive) =>
        drive.checkpointedModelCalls.map((problem) => `${drive.runId}: ${problem}`),
      );
      const kills = drives.reduce((sum, drive) => sum + drive.kills, 0);
      const conflicts = drives.reduce((sum, drive) => sum + drive.conflicts, 0);
      const decisions = drives.flatMap((drive) => [...drive.decisions.values()]);
      const terminal = statuses.filter((status) => ['completed', 'failed', 'cancelled'].includes(status));
      const completed = statuses.filter((status) => status === 'completed').length;
      const seconds = ((performance.now() - startedMs) / 1_000).toFixed(1);

      console.log(
        `crash test (seed ${SEED}): ${drives.length} runs, ${kills} kills, ${duplicates.length} duplicate side effects, ` +
          `${problems.length} lost steps, ${terminal.length} terminal (${completed} completed), ` +
          `${modelRepeats.length} checkpointed model responses requested again, ` +
          `uncertain calls: ${decisions.filter((decision) => decision === 'abandon').length} abandoned, ` +
          `${decisions.filter((decision) => decision === 'execute').length} re-executed; ` +
          `${completedCalls} completed calls, ${idempotentRepeats} idempotent calls re-run, ` +
          `${drives.reduce((sum, drive) => sum + drive.spawns, 0)} children, ` +
          `${drives.reduce((sum, drive) => sum + drive.restarts, 0)} restarts, ` +
          `${conflicts} resumes by a new owner refused until the dead owner's lease expired, ${seconds} s`,
      );
      console.log(`crash test: kills after ${tally(drives.flatMap((drive) => drive.killedAfter))}`);

      const suspicious = new Set([
        ...duplicates.map(([key]) => key.slice(0, key.indexOf(':'))),
        ...[...problems, ...modelRepeats].map((problem) => problem.slice(0, problem.search(/[: ]/))),
      ]);
      if (suspicious.size > 0)
        console.log(`crash test: the store and the side-effect file are kept in ${directory}`);
      for (const drive of drives) {
        if (suspicious.has(drive.runId))
          console.log(`crash test: ${drive.runId}\n  ${drive.trace.join('\n  ')}`);
      }
      expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
      expect(duplicates, 'non-idempotent side effects executed twice').toEqual([]);
      expect(problems, 'completed steps lost').toEqual([]);
      expect(ledgerWithoutEffect, 'completed ledger entries with no side effect').toBe(0);
      expect(modelRepeats, 'checkpointed model responses requested again').toEqual([]);
      expect(effectsWithoutLedger, 'side effects the ledger never recorded').toEqual([]);
      expect(statuses).toEqual(drives.map(() => 'completed'));
      // The schedule reached the moments that matter: inside a call, and between its effect and its completion.
      const killedAfter = drives.flatMap((drive) => drive.killedAfter);
      expect(killedAfter.filter((label) => label === 'tool-call-start').length).toBeGreaterThan(0);
      expect(killedAfter.filter((label) => label === 'effect').length).toBeGreaterThan(0);
      expect(decisions.filter((decision) => decision === 'abandon').length).toBeGreaterThan(0);
      expect(decisions.filter((decision) => decision === 'execute').length).toBeGreaterThan(0);
      // New owners met live leases of dead ones, and got in once those expired (a second refusal throws in driveRun).
      expect(conflicts).toBeGreaterThan(0);
      rmSync(directory, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );
});
