// The parent's side of the crash test: spawns crash-child.js, SIGKILLs it at a chosen line, and drives one run from
// start to a terminal state through kills, resumes and the decisions an operator would make.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { EXIT_RUN_NOT_FOUND } from './crash-plan.js';
import type { Random } from './prng.js';

/** One JSON line the child printed. */
export interface ChildLine {
  type: 'event' | 'effect' | 'result' | 'error';
  event?: string;
  step?: number;
  callIndex?: number;
  key?: string;
  status?: string;
  stopReason?: string;
  resumable?: boolean;
  errorCode?: string;
  code?: string;
  message?: string;
  output?: unknown;
  pending?: { kind: string; idempotencyKey: string; toolName: string }[];
}

/** When to kill a child: once it has printed `afterLine` lines, `delayMs` later (0: at once). */
export interface KillPlan {
  afterLine: number;
  delayMs: number;
}

/** How one child ended. */
export interface ChildOutcome {
  /** Whether SIGKILL ended it (a kill planned after the child had exited does not count). */
  killed: boolean;
  exitCode: number | null;
  /** What the child had printed last when the kill was sent: the transition the kill followed. */
  killedAfter?: string;
  lines: ChildLine[];
  stderr: string;
}

/** Spawns the child with `args` and kills it as `kill` says. */
export function runChild(childPath: string, args: readonly string[], kill?: KillPlan): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: ChildLine[] = [];
    let buffered = '';
    let stderr = '';
    let killedAfter: string | undefined;
    const sendKill = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const last = lines[lines.length - 1];
      killedAfter = last === undefined ? 'spawn' : last.type === 'event' ? String(last.event) : last.type;
      child.kill('SIGKILL');
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const text = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        lines.push(JSON.parse(text) as ChildLine);
        if (kill !== undefined && lines.length === kill.afterLine) {
          if (kill.delayMs === 0) sendKill();
          else setTimeout(sendKill, kill.delayMs);
        }
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      const killed = signal === 'SIGKILL';
      resolve({ killed, exitCode, ...(killed ? { killedAfter } : {}), lines, stderr });
    });
  });
}

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
}

/** What happened to one run on its way to a terminal state. */
export interface DriveResult {
  runId: string;
  kills: number;
  killedAfter: string[];
  spawns: number;
  /** Times `resume` found no run (the first child died before recording it) and the run was started again. */
  restarts: number;
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
    decisions: new Map(),
    result: { type: 'result' },
    checkpointedModelCalls: [],
    trace: [],
  };
  let mode: 'run' | 'resume' = 'run';
  let decisions: Record<string, 'execute' | 'abandon'> | undefined;
  while (drive.spawns < (options.maxSpawns ?? 100)) {
    const kill =
      drive.kills < options.maxKills
        ? { afterLine: random.integer(1, options.maxKillLine), delayMs: random.integer(0, 3) }
        : undefined;
    const args = [databasePath, effectsPath, mode, runId];
    if (decisions !== undefined) args.push(JSON.stringify(decisions));
    drive.spawns++;
    const outcome = await runChild(childPath, args, kill);
    drive.trace.push(traceOf(mode, decisions, kill, outcome));
    drive.checkpointedModelCalls.push(...checkpointedModelCalls(outcome.lines));
    if (outcome.killed) {
      drive.kills++;
      options.onKill?.();
      drive.killedAfter.push(outcome.killedAfter ?? 'spawn');
      mode = 'resume';
      // Whatever the killed child was told, the next one asks the store afresh what is pending.
      decisions = undefined;
      continue;
    }
    if (outcome.exitCode === EXIT_RUN_NOT_FOUND && mode === 'resume') {
      drive.restarts++;
      mode = 'run';
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
  decisions: Record<string, string> | undefined,
  kill: KillPlan | undefined,
  outcome: ChildOutcome,
): string {
  const asked = `${mode}${decisions === undefined ? '' : ` ${JSON.stringify(decisions)}`}`;
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
