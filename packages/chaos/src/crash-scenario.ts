import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { ledgerOf } from './environment.js';
import { requireTools } from './run-sample.js';
import { childErrorsOf, type ScenarioRun } from './run-scenario.js';
import { environmentSpecOf, requestSamples, startScenarioServer } from './scenario-server.js';
import type { ScenarioObservation } from './scorecard.js';
import { drawAt, runIdOf } from './seeds.js';
import { emptyObservation, onWorkerLines, skippedWithoutWorker, workerScriptPath } from './worker-process.js';
import type { WorkerLine, WorkerSpec } from './worker-protocol.js';
import { workerRunSamples } from './worker-samples.js';

/** When to kill the first worker: after `afterUnits` effects (or starts, for runs without tools), `delayMs` later. */
export interface KillPlan {
  readonly afterUnits: number;
  readonly unit: 'effect' | 'start';
  readonly delayMs: number;
}

/**
 * Where the kill lands, from the seed: once 20% to 50% of the effects all runs would make have happened (so that
 * many runs are under way), plus 0 to 3 ms, so that it falls inside calls as well as between them.
 */
export function killPlan(seed: number, scenario: string, runs: number, effectsPerRun: number): KillPlan {
  const unit = effectsPerRun > 0 ? 'effect' : 'start';
  const total = runs * (effectsPerRun > 0 ? effectsPerRun : 1);
  const fraction = 0.2 + 0.3 * drawAt(0, seed, scenario, 'kill');
  return {
    afterUnits: Math.max(1, Math.round(total * fraction)),
    unit,
    delayMs: Math.floor(drawAt(1, seed, scenario, 'kill') * 4),
  };
}

interface WorkerOutcome {
  readonly lines: WorkerLine[];
  readonly killed: boolean;
  readonly stderr: string;
}

/**
 * Starts a worker with `spec`; kills it (SIGKILL) as `kill` says, at `deadlineMs` (milliseconds since the epoch) if
 * it still runs then, or when `signal` aborts (the suite was cancelled).
 */
function runWorker(
  spec: WorkerSpec,
  deadlineMs: number,
  signal: AbortSignal | undefined,
  kill?: KillPlan,
): Promise<WorkerOutcome> {
  const child = spawn(process.execPath, [workerScriptPath(), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: WorkerLine[] = [];
  let units = 0;
  let killed = false;
  let stderr = '';
  const sendKill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killed = true;
    child.kill('SIGKILL');
  };
  const deadline = setTimeout(sendKill, Math.max(0, deadlineMs - Date.now()));
  signal?.addEventListener('abort', sendKill, { once: true });
  onWorkerLines(child.stdout, (line) => {
    lines.push(line);
    if (kill !== undefined && line.type === kill.unit && ++units === kill.afterUnits) {
      if (kill.delayMs === 0) sendKill();
      else setTimeout(sendKill, kill.delayMs);
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(deadline);
      signal?.removeEventListener('abort', sendKill);
      resolve({ lines, killed, stderr });
    });
  });
}

/**
 * The crash scenario: the runs start in a worker process, which is killed with SIGKILL mid-run at a seeded moment;
 * a second worker then recovers every run the first left unfinished (durable subjects resume from their last
 * checkpoint, the others start again). Runs not ended by their cap count as hung.
 */
export async function runCrashScenario(run: ScenarioRun): Promise<ScenarioObservation> {
  const { subject, scenario, calibration, seed } = run;
  if (subject.worker === undefined) return skippedWithoutWorker(run);
  const directory = await mkdtemp(join(tmpdir(), `keel-chaos-${scenario.name}-`));
  const scenarioServer = await startScenarioServer(scenario, subject, calibration, seed);
  try {
    const environment = environmentSpecOf(scenario, scenarioServer, directory, seed);
    const runIds = Array.from({ length: run.runs }, (_, index) => runIdOf(scenario.name, seed, index));
    const startedAtMs = Date.now();
    const windows = scenarioServer.arm(startedAtMs);
    const spec = (mode: WorkerSpec['mode'], runs: WorkerSpec['runs']): WorkerSpec => ({
      module: subject.worker!.module,
      options: subject.worker!.options,
      environment,
      task: run.task,
      mode,
      runs,
    });
    const first = await runWorker(
      spec(
        'run',
        runIds.map((runId, index) => ({ runId, delayMs: (index * scenario.arrivalMs) / run.runs })),
      ),
      startedAtMs + scenario.arrivalMs + run.capMs,
      run.signal,
      killPlan(seed, scenario.name, run.runs, calibration.effectsPerRun),
    );
    failIfBroken(first);
    const started = new Map<string, number>();
    const ended = new Map<string, Extract<WorkerLine, { type: 'end' }>>();
    const take = (lines: readonly WorkerLine[]) => {
      for (const line of lines) {
        if (line.type === 'start' && !started.has(line.runId)) started.set(line.runId, line.atMs);
        if (line.type === 'end') ended.set(line.runId, line);
      }
    };
    take(first.lines);
    const unfinished = runIds.filter((runId) => !ended.has(runId));
    const recoveredAtMs = Date.now();
    if (unfinished.length > 0) {
      const deadline = Math.max(
        ...unfinished.map((runId) => (started.get(runId) ?? recoveredAtMs) + run.capMs),
      );
      const second = await runWorker(
        spec(
          'recover',
          unfinished.map((runId) => ({ runId, delayMs: 0 })),
        ),
        deadline,
        run.signal,
      );
      failIfBroken(second);
      take(second.lines);
    }
    const { runs, moves } = workerRunSamples(
      runIds,
      { started, ended },
      { unstartedAtMs: recoveredAtMs, capMs: run.capMs, answer: calibration.answer },
    );
    const effects = ledgerOf(environment).read();
    return {
      ...emptyObservation(run),
      startedAtMs,
      finishedAtMs: Date.now(),
      runs: requireTools(runs, effects, calibration.tools),
      requests: requestSamples(scenarioServer.server),
      ...childErrorsOf(scenario, scenarioServer),
      effects,
      breakerMoves: moves,
      windows,
      schedule: scenarioServer.schedule,
      ...(first.killed ? {} : { skipped: 'the worker finished every run before the planned kill' }),
    };
  } finally {
    await scenarioServer.server.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** A worker that failed on its own (not by the kill) is a broken setup, not a measurement. */
function failIfBroken(outcome: WorkerOutcome): void {
  const error = outcome.lines.find((line) => line.type === 'error');
  if (error !== undefined) {
    throw new KeelError('internal.unexpected', `The chaos worker failed: ${error.message}`);
  }
  if (!outcome.killed && !outcome.lines.some((line) => line.type === 'ready')) {
    throw new KeelError(
      'internal.unexpected',
      `The chaos worker ended before it was ready: ${outcome.stderr.trim()}`,
    );
  }
}
