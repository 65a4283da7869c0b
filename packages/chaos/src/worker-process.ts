// What the scenarios run in worker processes (the crash scenario, fleets) share: the worker script, the lines it
// writes, and the observation of a run before anything happened.

import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ScenarioRun } from './run-scenario.js';
import type { ScenarioObservation } from './scorecard.js';
import type { WorkerLine } from './worker-protocol.js';

/** The compiled worker script (beside this module once built; under `dist/` when run from the sources by vitest). */
export function workerScriptPath(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith('.ts')
    ? join(dirname(here), '..', 'dist', 'worker.js')
    : join(dirname(here), 'worker.js');
}

/** Calls `onLine` with each line a worker writes to `output`: one JSON value a line. */
export function onWorkerLines(output: Readable, onLine: (line: WorkerLine) => void): void {
  let buffered = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = JSON.parse(buffered.slice(0, newline)) as WorkerLine;
      buffered = buffered.slice(newline + 1);
      onLine(line);
    }
  });
}

/** The observation of a scenario run in worker processes before anything happened: no runs, requests or effects. */
export function emptyObservation(run: ScenarioRun) {
  return {
    scenario: run.scenario,
    subject: run.subject.name,
    requestsPerCleanRun: run.calibration.requestsPerRun,
    effects: [],
    breakerMoves: [],
    windows: [],
    requests: [],
    runs: [],
  };
}

/** The observation of a subject that cannot run in a worker process: skipped, saying so. */
export function skippedWithoutWorker(run: ScenarioRun): ScenarioObservation {
  const now = Date.now();
  return {
    ...emptyObservation(run),
    startedAtMs: now,
    finishedAtMs: now,
    skipped: 'the subject cannot run in a worker process',
  };
}
