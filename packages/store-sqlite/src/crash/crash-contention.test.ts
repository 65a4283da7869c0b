// Issue 4: two processes resuming the same run at the same moment: exactly one proceeds, the other gets
// store.conflict. Each run is first killed mid-run (SIGKILL) by a real child process; once the dead owner's lease has
// expired, two rival children with owners of their own are released at once; the run is then resumed to its end and
// the side-effect file must show every non-idempotent call exactly once.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type ChildOutcome, runChild, spawnChild } from './crash-child-process.js';
import { driveRun, readEffects } from './crash-harness.js';
import { type ChildSettings, crashPlan, EXIT_CONFLICT, expectedKey } from './crash-plan.js';
import { crashSettings } from './crash-settings.js';
import { seededRandom, seedOf } from './prng.js';

const CHILD_PATH = fileURLToPath(new URL('../../dist/crash/crash-child.js', import.meta.url));
const SEED = crashSettings(process.env).seed;
const RUNS = 6;
// The killed owner's lease is short, so the rivals wait little for it; theirs is long, so that a rival slowed down
// by a busy machine never loses the lease it won. The winner keeps its lease a moment before going on, so that the
// rival's attempt surely meets it, however the two processes are scheduled.
const DEAD_LEASE_TTL_MS = 200;
const RIVAL_LEASE_TTL_MS = 10_000;
const HOLD_LEASE_MS = 500;

function settings(value: ChildSettings): string {
  return JSON.stringify(value);
}

describe('crash test: two processes resume the same run at once', () => {
  it('exactly one proceeds, the other gets store.conflict, and no side effect runs twice', async () => {
    expect(existsSync(CHILD_PATH), `build first (npx tsc -b tsconfig.build.json): ${CHILD_PATH}`).toBe(true);
    const directory = mkdtempSync(join(tmpdir(), 'keel-contention-'));
    const databasePath = join(directory, 'keel.db');
    const effectsPath = join(directory, 'effects.log');
    const runIds: string[] = [];

    for (let index = 0; index < RUNS; index++) {
      const runId = `contention-${SEED}-${index}`;
      runIds.push(runId);
      const random = seededRandom(seedOf(`${SEED}/contention/${index}`));
      // Killed after a few transitions: recorded in the store (its first line comes after that), far from its end.
      const killed = await runChild(
        CHILD_PATH,
        [
          databasePath,
          effectsPath,
          'run',
          runId,
          settings({ owner: 'worker-a', leaseTtlMs: DEAD_LEASE_TTL_MS }),
        ],
        { afterLine: random.integer(2, 8), delayMs: random.integer(0, 3) },
      );
      expect(killed.killed, `${runId}: the first child was not killed`).toBe(true);

      const rivals = ['worker-b', 'worker-c'].map((owner) =>
        spawnChild(CHILD_PATH, [
          databasePath,
          effectsPath,
          'resume',
          runId,
          settings({ owner, leaseTtlMs: RIVAL_LEASE_TTL_MS, holdLeaseMs: HOLD_LEASE_MS, waitForGo: true }),
        ]),
      );
      await Promise.all(rivals.map((rival) => rival.ready));
      // worker-a's lease was last renewed before it died: past this moment it has expired.
      await sleep(Math.max(0, killed.endedAtMs + DEAD_LEASE_TTL_MS + 25 - Date.now()));
      for (const rival of rivals) rival.go();
      const outcomes = await Promise.all(rivals.map((rival) => rival.outcome));

      const describeOutcomes = JSON.stringify(outcomes.map(summary));
      const proceeded = outcomes.filter((outcome) => outcome.exitCode === 0);
      const refused = outcomes.filter((outcome) => outcome.exitCode === EXIT_CONFLICT);
      expect(proceeded, `${runId}: ${describeOutcomes}`).toHaveLength(1);
      expect(refused, `${runId}: ${describeOutcomes}`).toHaveLength(1);
      expect(refused[0]!.lines).toEqual([
        { type: 'ready' },
        expect.objectContaining({ type: 'error', code: 'store.conflict' }),
      ]);
      const winner = proceeded[0]!.lines;
      expect(winner.some((line) => line.type === 'event' && line.event === 'run-resumed')).toBe(true);
      expect(winner.find((line) => line.type === 'result')?.status).toMatch(/^(completed|interrupted)$/);

      // The winner may stop at a call that may have run, for an operator's decision: see the run to its end.
      const drive = await driveRun({
        childPath: CHILD_PATH,
        databasePath,
        effectsPath,
        runId,
        random,
        maxKills: 0,
        maxKillLine: 1,
        startMode: 'resume',
      });
      expect(drive.result.status, `${runId}: ${drive.trace.join('\n')}`).toBe('completed');
    }

    const effects = readEffects(effectsPath);
    for (const runId of runIds) {
      crashPlan(runId).steps.forEach((calls, stepIndex) => {
        calls.forEach((call, callIndex) => {
          const key = expectedKey(runId, stepIndex + 1, callIndex);
          const count = effects.get(key)?.count ?? 0;
          if (call.idempotent) expect(count, `${key} (${call.toolName})`).toBeGreaterThanOrEqual(1);
          else expect(count, `${key} (${call.toolName})`).toBe(1);
        });
      });
    }
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);
});

function summary(outcome: ChildOutcome): string {
  const last = outcome.lines[outcome.lines.length - 1];
  return `exit ${outcome.exitCode}: ${JSON.stringify(last)} ${outcome.stderr.slice(0, 300)}`;
}
