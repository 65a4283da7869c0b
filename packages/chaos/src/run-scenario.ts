import { setMaxListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { answerCheck } from './answer-check.js';
import { type ChildErrorsSeen, childErrorsSeen } from './child-errors.js';
import { environmentOf, ledgerOf } from './environment.js';
import { requireTools, sampleOf, thrownSample } from './run-sample.js';
import type { ChaosScenario } from './scenario.js';
import {
  type Calibration,
  environmentSpecOf,
  requestSamples,
  type ScenarioServer,
  startScenarioServer,
} from './scenario-server.js';
import type { RunSample, ScenarioObservation } from './scorecard.js';
import { runIdOf } from './seeds.js';
import { type BreakerMoveRecord, CHILD_TOOL, type ChaosSubject, type PreparedSubject } from './subject.js';

/** What one subject's pass through one scenario needs. */
export interface ScenarioRun {
  readonly subject: ChaosSubject;
  readonly scenario: ChaosScenario;
  readonly calibration: Calibration;
  readonly runs: number;
  readonly seed: number;
  readonly task: string;
  /** Longest a run may take, in milliseconds, before it counts as hung. */
  readonly capMs: number;
  /** Aborts every run under way (the suite was cancelled). Defaults to none. */
  readonly signal?: AbortSignal;
}

/** Longest the subject's `close` may take after a scenario, in milliseconds: a close that hangs is left behind. */
const CLOSE_TIMEOUT_MS = 5_000;

/** How often the event loop's delay is sampled, in milliseconds. */
const LOOP_RESOLUTION_MS = 10;

/**
 * Runs a scenario in this process: the scenario's server, one prepared subject, and `runs` runs started evenly over
 * the scenario's arrival time, all at once; each is given up on (and counted hung) at the cap, never waited for
 * longer.
 */
export async function runScenario(run: ScenarioRun): Promise<ScenarioObservation> {
  const { subject, scenario, calibration, seed } = run;
  const directory = await mkdtemp(join(tmpdir(), `keel-chaos-${scenario.name}-`));
  const scenarioServer = await startScenarioServer(scenario, subject, calibration, seed);
  let prepared: PreparedSubject | undefined;
  try {
    const spec = environmentSpecOf(scenario, scenarioServer, directory, seed);
    prepared = await subject.prepare(environmentOf(spec));
    // How late the shared event loop runs under the load: a request admitted before a breaker opened reaches the
    // server at most about that much later (see the probe goal).
    const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    loopDelay.enable();
    const startedAtMs = Date.now();
    const windows = scenarioServer.arm(startedAtMs);
    const complete = answerCheck(calibration.answer);
    const moves: BreakerMoveRecord[] = [];
    // One listener per run in flight on this signal; never on the caller's, which outlives the scenario.
    const scenarioSignal = linkedSignal(run.signal);
    setMaxListeners(run.runs + 10, scenarioSignal.signal);
    const runOne = async (index: number): Promise<RunSample> => {
      await delay(startedAtMs + (index * scenario.arrivalMs) / run.runs - Date.now());
      const runId = runIdOf(scenario.name, seed, index);
      const begun = Date.now();
      const ending = await withCap(
        (signal) => prepared!.run({ runId, task: run.task, signal }),
        run.capMs,
        scenarioSignal.signal,
      );
      const ended = Date.now();
      if (ending.kind === 'hung')
        return { runId, startedAtMs: begun, endedAtMs: ended, outcome: 'hung', code: 'hung' };
      if (ending.kind === 'threw') return thrownSample(runId, begun, ended, ending.error);
      moves.push(...(ending.ending.breakerMoves ?? []));
      return sampleOf(runId, begun, ended, ending.ending, complete);
    };
    const runs = await Promise.all(Array.from({ length: run.runs }, (_, index) => runOne(index))).finally(
      () => {
        scenarioSignal.dispose();
        loopDelay.disable();
      },
    );
    const finishedAtMs = Date.now();
    const effects = ledgerOf(spec).read();
    return {
      scenario,
      subject: subject.name,
      startedAtMs,
      finishedAtMs,
      runs: requireTools(runs, effects, calibration.tools),
      requests: requestSamples(scenarioServer.server),
      ...childErrorsOf(scenario, scenarioServer),
      effects,
      breakerMoves: moves,
      windows,
      requestsPerCleanRun: calibration.requestsPerRun,
      schedule: scenarioServer.schedule,
      eventLoopDelayMaxMs: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
    };
  } finally {
    if (prepared !== undefined) await withCap(() => prepared!.close(), CLOSE_TIMEOUT_MS);
    await scenarioServer.server.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** How a capped call ended. */
export type Capped<T> = { kind: 'ended'; ending: T } | { kind: 'threw'; error: unknown } | { kind: 'hung' };

/**
 * Calls `call` with a signal that aborts at the cap (or when `outer` aborts); resolves at the cap at the latest,
 * whether or not the call honours its signal (a call that does not is left behind, counted hung).
 */
export function withCap<T>(
  call: (signal: AbortSignal) => Promise<T>,
  capMs: number,
  outer?: AbortSignal,
): Promise<Capped<T>> {
  const linked = linkedSignal(outer);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve({ kind: 'hung' });
      linked.dispose();
      linked.abort(new Error(`the chaos cap of ${capMs} ms was reached`));
    }, capMs);
    const settle = (capped: Capped<T>) => {
      clearTimeout(timer);
      linked.dispose();
      resolve(capped);
    };
    let pending: Promise<T>;
    try {
      pending = call(linked.signal);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (ending) => settle({ kind: 'ended', ending }),
      (error: unknown) => settle({ kind: 'threw', error }),
    );
  });
}

/** A signal of its own that also aborts when `outer` does, until `dispose` unlinks the two. */
function linkedSignal(outer: AbortSignal | undefined): {
  signal: AbortSignal;
  abort: (reason: unknown) => void;
  dispose: () => void;
} {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted === true) onAbort();
  outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose: () => outer?.removeEventListener('abort', onAbort),
  };
}

function delay(milliseconds: number): Promise<void> {
  return milliseconds <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** In a nested scenario, the child's failures as the parent's model read them (see `childErrorsSeen`); else nothing. */
export function childErrorsOf(
  scenario: ChaosScenario,
  scenarioServer: ScenarioServer,
): { childErrors?: ChildErrorsSeen } {
  if (scenario.child === undefined) return {};
  const parentModels = scenarioServer.models.map((model) => model.name);
  return { childErrors: childErrorsSeen(scenarioServer.server.requests, parentModels, CHILD_TOOL.name) };
}
