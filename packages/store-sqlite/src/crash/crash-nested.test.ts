// The crash test on trees of runs (issue 21): each run calls an agent tool whose child run has a crash plan of its
// own; child processes are SIGKILLed at seeded moments anywhere in the tree (the child's events and effects are
// printed lines too) and resumed through the parent alone. Every side effect, the child's included, happens once;
// no completed step of either run is lost; the child is resumed, never run again from the start.
// `npm run crash -- --nested --runs 100` runs it at scale (at least 500 kills); this file's own default is small.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../sqlite-run-store.js';
import { type DriveResult, driveRun, readEffects } from './crash-harness.js';
import { delegateRunId } from './crash-plan.js';
import { crashSettings } from './crash-settings.js';
import { lostSteps, type StoredState } from './crash-steps.js';
import { seededRandom, seedOf } from './prng.js';

const CHILD_PATH = fileURLToPath(new URL('../../dist/crash/crash-child.js', import.meta.url));
// The command (`--nested`) sets KEEL_CRASH_NESTED and the scale; alone, this file drives 6 trees through 30 kills.
const settings =
  process.env.KEEL_CRASH_NESTED === '1'
    ? crashSettings(process.env)
    : { ...crashSettings({}), runs: 6, minKills: 30, parallel: 2 };
// 46 kills took 118 s on the busy 2-core machine: 3 s a kill leaves room.
const TIMEOUT_MS = Math.max(240_000, 20_000 * settings.runs, 3_000 * settings.minKills);

async function driveTrees(paths: { databasePath: string; effectsPath: string }): Promise<DriveResult[]> {
  const drives: DriveResult[] = [];
  let kills = 0;
  let next = 0;
  const worker = async () => {
    while (next < settings.runs || (kills < settings.minKills && next < settings.runs + settings.minKills)) {
      const index = next++;
      const random = seededRandom(seedOf(`${settings.seed}/nested/${index}`));
      drives[index] = await driveRun({
        childPath: CHILD_PATH,
        ...paths,
        runId: `nested-${settings.seed}-${index}`,
        random,
        maxKills: random.integer(6, 10),
        // A tree prints about twice a run's lines: kills spread over the parent's and the child's.
        maxKillLine: 24,
        nested: true,
        onKill: () => {
          kills++;
        },
      });
    }
  };
  await Promise.all(Array.from({ length: settings.parallel }, worker));
  return drives;
}

describe('crash test on nested runs (SIGKILL anywhere in the tree, resume through the parent)', () => {
  it(
    'executes no side effect twice, loses no step of parent or child, and resumes the child rather than re-running it',
    async () => {
      expect(existsSync(CHILD_PATH), `build first (npx tsc -b): ${CHILD_PATH}`).toBe(true);
      const directory = mkdtempSync(join(tmpdir(), 'keel-crash-nested-'));
      const databasePath = join(directory, 'keel.db');
      const effectsPath = join(directory, 'effects.log');
      const startedMs = performance.now();
      const drives = await driveTrees({ databasePath, effectsPath });
      const effects = readEffects(effectsPath);
      const store = new SqliteRunStore(databasePath);
      const problems: string[] = [];
      const ledgerKeys = new Set<string>();
      try {
        for (const drive of drives) {
          for (const runId of [drive.runId, delegateRunId(drive.runId)]) {
            const record = await store.loadRun(runId);
            if (record === undefined) {
              problems.push(`${runId}: not in the store`);
              continue;
            }
            if (record.status !== 'completed') problems.push(`${runId}: ${record.status}`);
            const ledger = await store.ledger(runId);
            for (const entry of ledger) ledgerKeys.add(entry.idempotencyKey);
            problems.push(
              ...lostSteps(runId, drive.decisions, record.state as unknown as StoredState, ledger, effects),
            );
            if (
              runId !== drive.runId &&
              (record.state as { parentRunId?: string }).parentRunId !== drive.runId
            )
              problems.push(`${runId}: not linked to its parent`);
          }
        }
      } finally {
        await store.close();
      }
      const duplicates = [...effects].filter(([, effect]) => !effect.idempotent && effect.count > 1);
      const effectsWithoutLedger = [...effects.keys()].filter((key) => !ledgerKeys.has(key));
      const kills = drives.reduce((sum, drive) => sum + drive.kills, 0);
      const killedAfter = drives.flatMap((drive) => drive.killedAfter);
      const inChild = killedAfter.filter((label) => label.startsWith('child:') || label === 'effect').length;
      const decisions = drives.flatMap((drive) => [...drive.decisions.values()]);
      const modelRepeats = drives.flatMap((drive) => drive.checkpointedModelCalls);
      console.log(
        `nested crash test (seed ${settings.seed}): ${drives.length} trees, ${kills} kills (${inChild} inside the child run or a side effect), ` +
          `${duplicates.length} duplicate side effects, ${problems.length} lost steps, ` +
          `uncertain calls decided: ${decisions.length}, ${((performance.now() - startedMs) / 1_000).toFixed(1)} s`,
      );
      if (problems.length > 0 || duplicates.length > 0) {
        console.log(`nested crash test: kept in ${directory}`);
        for (const drive of drives) console.log(`${drive.runId}\n  ${drive.trace.join('\n  ')}`);
      }
      expect(kills).toBeGreaterThanOrEqual(settings.minKills);
      expect(duplicates, 'non-idempotent side effects executed twice').toEqual([]);
      expect(problems, 'completed steps lost').toEqual([]);
      expect(effectsWithoutLedger, 'side effects the ledger never recorded').toEqual([]);
      expect(modelRepeats, 'checkpointed model responses requested again').toEqual([]);
      expect(killedAfter.some((label) => label.startsWith('child:'))).toBe(true);
      rmSync(directory, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );
});
