import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { KeelError } from '@keel/core';
import { ledgerOf } from './environment.js';
import { requireTools } from './run-sample.js';
import type { ScenarioRun } from './run-scenario.js';
import { environmentSpecOf, requestSamples, startScenarioServer } from './scenario-server.js';
import type { ScenarioObservation } from './scorecard.js';
import { runIdOf } from './seeds.js';
import { emptyObservation, onWorkerLines, skippedWithoutWorker, workerScriptPath } from './worker-process.js';
import type { WorkerLine, WorkerSpec } from './worker-protocol.js';
import { workerRunSamples } from './worker-samples.js';

/** Longest a worker may take to make its subject and say it is ready, in milliseconds (a loaded machine). */
const READY_TIMEOUT_MS = 60_000;

/** One process of the fleet: its lines so far, and when it has ended. */
interface FleetProcess {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly lines: WorkerLine[];
  readonly ready: Promise<void>;
  readonly ended: Promise<void>;
  stderr: string;
}

function startProcess(spec: WorkerSpec): FleetProcess {
  const child = spawn(process.execPath, [workerScriptPath(), JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: WorkerLine[] = [];
  let markReady: () => void = () => undefined;
  const fleetProcess: FleetProcess = {
    child,
    lines,
    stderr: '',
    ready: new Promise<void>((resolve) => {
      markReady = resolve;
    }),
    ended: new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', () => {
        markReady();
        resolve();
      });
    }),
  };
  onWorkerLines(child.stdout, (line) => {
    lines.push(line);
    if (line.type === 'ready') markReady();
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    fleetProcess.stderr += chunk;
  });
  // A worker that ended before reading its go must not fail the parent with EPIPE.
  child.stdin.on('error', () => undefined);
  return fleetProcess;
}

/**
 * A scenario run by a fleet (`ChaosScenario.workers`): that many worker processes make the subject from its worker
 * module, each takes every `workers`-th run, and all start together once every one is ready, against one server
 * (one API key, so one quota for the fleet). A process still running at the cap (after the arrival time) is killed and
 * its unfinished runs count as hung.
 */
export async function runFleetScenario(run: ScenarioRun): Promise<ScenarioObservation> {
  const { subject, scenario, calibration, seed } = run;
  const workers = scenario.workers ?? 1;
  if (subject.worker === undefined) return skippedWithoutWorker(run);
  const worker = subject.worker;
  const directory = await mkdtemp(join(tmpdir(), `keel-chaos-${scenario.name}-`));
  const scenarioServer = await startScenarioServer(scenario, subject, calibration, seed);
  const processes: FleetProcess[] = [];
  const stopAll = () => {
    for (const { child } of processes) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };
  run.signal?.addEventListener('abort', stopAll, { once: true });
  try {
    const environment = environmentSpecOf(scenario, scenarioServer, directory, seed);
    const runIds = Array.from({ length: run.runs }, (_, index) => runIdOf(scenario.name, seed, index));
    for (let slot = 0; slot < workers; slot++) {
      processes.push(
        startProcess({
          module: worker.module,
          options: worker.options,
          environment,
          task: run.task,
          mode: 'run',
          waitForGo: true,
          runs: runIds.flatMap((runId, index) =>
            index % workers === slot ? [{ runId, delayMs: (index * scenario.arrivalMs) / run.runs }] : [],
          ),
        }),
      );
    }
    const readyTimer = setTimeout(stopAll, READY_TIMEOUT_MS);
    await Promise.all(processes.map((fleetProcess) => fleetProcess.ready));
    clearTimeout(readyTimer);
    for (const fleetProcess of processes) failIfBroken(fleetProcess);
    const startedAtMs = Date.now();
    const windows = scenarioServer.arm(startedAtMs);
    for (const { child } of processes) child.stdin.end('go\n');
    const deadline = setTimeout(stopAll, scenario.arrivalMs + run.capMs);
    await Promise.all(processes.map((fleetProcess) => fleetProcess.ended)).finally(() =>
      clearTimeout(deadline),
    );
    for (const fleetProcess of processes) failIfBroken(fleetProcess);
    const started = new Map<string, number>();
    const ended = new Map<string, Extract<WorkerLine, { type: 'end' }>>();
    for (const line of processes.flatMap((fleetProcess) => fleetProcess.lines)) {
      if (line.type === 'start') started.set(line.runId, line.atMs);
      if (line.type === 'end') ended.set(line.runId, line);
    }
    const { runs, moves } = workerRunSamples(
      runIds,
      { started, ended },
      { unstartedAtMs: startedAtMs, capMs: run.capMs, answer: calibration.answer },
    );
    const effects = ledgerOf(environment).read();
    return {
      ...emptyObservation(run),
      startedAtMs,
      finishedAtMs: Math.max(startedAtMs, ...runs.map((sample) => sample.endedAtMs)),
      runs: requireTools(runs, effects, calibration.tools),
      requests: requestSamples(scenarioServer.server),
      effects,
      breakerMoves: moves,
      windows,
      schedule: scenarioServer.schedule,
    };
  } finally {
    stopAll();
    run.signal?.removeEventListener('abort', stopAll);
    await scenarioServer.server.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** A worker that failed on its own, or ended before it was ready, is a broken setup, not a measurement. */
function failIfBroken(fleetProcess: FleetProcess): void {
  const error = fleetProcess.lines.find((line) => line.type === 'error');
  if (error !== undefined) {
    throw new KeelError('internal.unexpected', `A chaos fleet worker failed: ${error.message}`);
  }
  if (!fleetProcess.lines.some((line) => line.type === 'ready')) {
    throw new KeelError(
      'internal.unexpected',
      `A chaos fleet worker ended before it was ready: ${fleetProcess.stderr.trim()}`,
    );
  }
}
