// The parent's side of the crash test: drives one run from start to a terminal state through SIGKILLs of
// crash-child.js at chosen lines, resumes (by the same owner, or by a new one once the dead one's lease expired) and
// the decisions an operator would make.
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ChildLine,
  type ChildOutcome,
  type KillPlan,
  type StartedChild,
  spawnChild,
} from './crash-child-process.js';
import { type ChildSettings, EXIT_CONFLICT, EXIT_RUN_NOT_FOUND } from './crash-plan.js';
import type { Random } from './prng.js';

/** Lines of the side-effect file, counted by idempotency key. */
export interface Effect {
  toolName: string;
  idempotent: boolean;
  count: number;
}

/** Reads the side-effect file written by the children. */
export function readEffects(effectsPath: string): Map<string, Effect> {
  const effects = new Map<string, Effect>();
  if (!existsSync(effectsPath)) return effects;
  for (const line of readFileSync(effectsPath, 'utf8').split('\n')) {
    if (line === '') continue;
    const [key, toolName, kind] = line.split('\t');
    const known = effects.get(key!);
    if (known !== undefined) known.count++;
    else effects.set(key!, { toolName: toolName!, idempotent: kind === 'idempotent', count: 1 });
  }
  return effects;
}

/** Options of {@link driveRun}. */
export interface DriveOptions {
  childPath: string;
  databasePath: string;
  effectsPath: string;
  runId: string;
  /** Draws this run's kill moments. */
  random: Random;
  /** Kills of this run; after them the run is left to finish. */
  maxKills: number;
  /** A kill lands after one of the first `maxKillLine` lines a child prints (then 0 to 3 ms later). */
  maxKillLine: number;
  /** A run that needs more children than this fails the test: something loops. Defaults to 100. */
  maxSpawns?: number;
  /** Called at each kill that landed. Defaults to none. */
  onKill?: () => void;
  /**
   * Makes every child a lease owner of its own (a new worker taking over), with this lease TTL. The next owner is
   * started before a child that may be killed, and resumes the moment it dies: it finds the dead owner's lease still
   * held, gets `store.conflict`, and the run is resumed again (by yet another owner) once that lease has expired; a
   * second refusal fails the drive. Defaults to none: one owner per run, which takes its lease back at once.
   */
  handover?: { leaseTtlMs: number };
  /** The first child's mode: `resume` for a run already in the store. Defaults to `run`. */
  startMode?: 'run' | 'resume';
  /** Makes every run a tree: an agent tool with a child run (see `ChildSettings.nested`). Defaults to false. */
  nested?: boolean;
}

// Past a dead owner's lease expiry, so that clock granularity cannot make a due retry early.
const EXPIRY_MARGIN_MS = 25;

/** What happened to one run on its way to a terminal state. */
export interface DriveResult {
  runId: string;
  kills: number;
  killedAfter: string[];
  spawns: number;
  /** Times `resume` found no run (the first child died before recording it) and the run was started again. */
  restarts: number;
  /** Resumes refused with `store.conflict` because a killed owner's lease had not expired yet (with `handover`). */
  conflicts: number;
  /**
   * The operator's last decision per uncertain call: `abandon` when its key was in the side-effect file (the model is
   * told the outcome is unknown), `execute` when it was not (the call runs again).
   */
  decisions: Map<string, 'execute' | 'abandon'>;
  /** The last child's result line. */
  result: ChildLine;
  /**
   * Model calls a resumed child made for a step its stored state already held a response for (the `run-resumed`
   * event carries the stored step; every model call after it must be for a later step). Must stay empty.
   */
  checkpointedModelCalls: string[];
  /** One line per child: what it was asked, what it printed, how it ended (printed when a check fails). */
  trace: string[];
}

/**
 * Runs, kills and resumes one run until a child reports a terminal state other than an `interrupted` run waiting for
 * decisions. An uncertain call is decided as an operator would: its key in the side-effect file means the effect
 * happened (`abandon`), its absence means it did not (`execute`).
 */
export async function driveRun(options: DriveOptions): Promise<DriveResult> {
  const { childPath, databasePath, effectsPath, runId, random } = options;
  const drive: DriveResult = {
    runId,
    kills: 0,
    killedAfter: [],
    spawns: 0,
    restarts: 0,
    conflicts: 0,
    decisions: new Map(),
    result: { type: 'result' },
    checkpointedModelCalls: [],
    trace: [],
  };
  let mode: 'run' | 'resume' = options.startMode ?? 'run';
  let decisions: Record<string, 'execute' | 'abandon'> | undefined;
  // When the last killed child's lease has surely expired (with `handover`).
  let leaseExpiresBy: number | undefined;
  // A kill drawn for a child refused with a conflict is kept for the retry, so that the kills do not depend on timing.
  let unusedKill: KillPlan | undefined;
  // With `handover`: the next owner, spawned with the child it follows and (unless that child is itself taking over)
  // ready before it is let go, so that it resumes the moment that one dies and meets the dead owner's lease, however
  // slowly processes start on a busy machine.
  let successor: { child: StartedChild; settings: ChildSettings } | undefined;
  const discarded: Promise<unknown>[] = [];
  let owners = 0;
  const spawnFor = (childMode: 'run' | 'resume', settings: ChildSettings) => {
    if (options.nested === true) settings.nested = true;
    if (options.handover !== undefined) {
      settings.owner = `crash-worker:${runId}:${owners++}`;
      settings.leaseTtlMs = options.handover.leaseTtlMs;
      settings.waitForGo = true;
    }
    const args = [databasePath, effectsPath, childMode, runId, JSON.stringify(settings)];
    return { child: spawnChild(childPath, args), settings };
  };
  const discard = (started: { child: StartedChild } | undefined) => {
    if (started === undefined) return;
    started.child.discard();
    discarded.push(started.child.outcome);
  };
  try {
    while (drive.spawns < (options.maxSpawns ?? 100)) {
      const kill =
        unusedKill ??
        (drive.kills < options.maxKills
          ? { afterLine: random.integer(1, options.maxKillLine), delayMs: random.integer(0, 3) }
          : undefined);
      unusedKill = undefined;
      const takesOver = successor !== undefined && mode === 'resume' && decisions === undefined;
      let next: { child: StartedChild; settings: ChildSettings };
      if (takesOver && successor !== undefined) next = successor;
      else {
        discard(successor);
        next = spawnFor(mode, decisions === undefined ? {} : { decisions });
      }
      successor = undefined;
      drive.spawns++;
      if (options.handover !== undefined && kill !== undefined) {
        successor = spawnFor('resume', {});
        // A child taking over must start at once to meet the dead owner's lease; any other waits for its successor.
        if (!takesOver) await successor.child.ready;
      }
      if (next.settings.waitForGo === true) await next.child.ready;
      next.child.go(kill);
      const outcome = await next.child.outcome;
      drive.trace.push(traceOf(mode, next.settings, kill, outcome));
      drive.checkpointedModelCalls.push(...checkpointedModelCalls(outcome.lines));
      if (outcome.killed) {
        drive.kills++;
        options.onKill?.();
        drive.killedAfter.push(outcome.killedAfter ?? 'spawn');
        mode = 'resume';
        // Whatever the killed child was told, the next one asks the store afresh what is pending.
        decisions = undefined;
        if (options.handover !== undefined) leaseExpiresBy = outcome.endedAtMs + options.handover.leaseTtlMs;
        continue;
      }
      // Only the first child after a kill may find the dead owner's lease; any later conflict is a lease never let go.
      const deadLeaseExpiresBy = leaseExpiresBy;
      leaseExpiresBy = undefined;
      if (outcome.exitCode === EXIT_RUN_NOT_FOUND && mode === 'resume') {
        drive.restarts++;
        mode = 'run';
        continue;
      }
      if (outcome.exitCode === EXIT_CONFLICT && mode === 'resume' && deadLeaseExpiresBy !== undefined) {
        // The dead owner's lease still holds the run: a new owner must wait for it to expire, and no longer.
        drive.conflicts++;
        unusedKill = kill;
        await sleep(Math.max(0, deadLeaseExpiresBy + EXPIRY_MARGIN_MS - Date.now()));
        continue;
      }
      const result = outcome.lines.find((line) => line.type === 'result');
      if (outcome.exitCode !== 0 || result === undefined) {
        const error = outcome.lines.find((line) => line.type === 'error');
        throw new Error(
          `run ${runId}: child (${mode}) exited with ${outcome.exitCode}: ${JSON.stringify(error)} ${outcome.stderr}`,
        );
      }
      const pending = result.pending ?? [];
      if (result.status === 'interrupted' && pending.length > 0) {
        const effects = readEffects(effectsPath);
        decisions = {};
        for (const entry of pending) {
          if (entry.kind !== 'uncertain') throw new Error(`run ${runId}: unexpected pending ${entry.kind}`);
          const decision = effects.has(entry.idempotencyKey) ? 'abandon' : 'execute';
          decisions[entry.idempotencyKey] = decision;
          drive.decisions.set(entry.idempotencyKey, decision);
        }
        mode = 'resume';
        continue;
      }
      drive.result = result;
      return drive;
    }
    throw new Error(`run ${runId}: no terminal state after ${drive.spawns} children`);
  } finally {
    successor?.child.discard();
    if (successor !== undefined) discarded.push(successor.child.outcome);
    await Promise.allSettled(discarded);
  }
}

function checkpointedModelCalls(lines: readonly ChildLine[]): string[] {
  const resumed = lines.find((line) => line.type === 'event' && line.event === 'run-resumed');
  if (resumed?.step === undefined) return [];
  return lines
    .filter((line) => line.event === 'model-call-start' && (line.step ?? 0) <= resumed.step!)
    .map((line) => `model called for step ${line.step} after resuming at step ${resumed.step}`);
}

function traceOf(
  mode: string,
  settings: ChildSettings,
  kill: KillPlan | undefined,
  outcome: ChildOutcome,
): string {
  const asked = `${mode}${Object.keys(settings).length === 0 ? '' : ` ${JSON.stringify(settings)}`}`;
  const planned = kill === undefined ? 'no kill' : `kill after line ${kill.afterLine} +${kill.delayMs} ms`;
  const printed = outcome.lines
    .map((line) =>
      line.type === 'event'
        ? `${line.event}${line.step === undefined ? '' : `@${line.step}`}${line.callIndex === undefined ? '' : `.${line.callIndex}`}`
        : line.type === 'effect'
          ? `effect(${line.key})`
          : JSON.stringify(line),
    )
    .join(' ');
  const ended = outcome.killed ? `KILLED after ${outcome.killedAfter}` : `exit ${outcome.exitCode}`;
  return `${asked} [${planned}] -> ${printed} -> ${ended}`;
}
