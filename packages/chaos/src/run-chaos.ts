import { KeelError } from '@keel/core';
import { rejectUnknownOptions, throwOptionError } from '@keel/core/adapter';
import { calibrate, shapeOf } from './calibrate.js';
import { runCrashScenario } from './crash-scenario.js';
import { runFleetScenario } from './fleet-scenario.js';
import { runScenario } from './run-scenario.js';
import type { ChaosScenario, GoalName } from './scenario.js';
import { checkScenario } from './scenario-check.js';
import type { Calibration } from './scenario-server.js';
import { selectScenarios } from './scenarios.js';
import { type ScenarioObservation, type Scorecard, scorecardOf } from './scorecard.js';
import type { ChaosSubject } from './subject.js';

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  /** What to measure, side by side. Required: at least one. */
  subjects: readonly ChaosSubject[];
  /** The task every run is given. Required. */
  task: string;
  /**
   * Which scenarios: names of built-in scenarios, or scenario definitions (your own, checked as `loadScenarios`
   * checks a file's). Defaults to every built-in scenario.
   */
  scenarios?: readonly (string | ChaosScenario)[];
  /** Runs per scenario and subject, all under way at once. Defaults to 50. */
  runs?: number;
  /** Seed of every fault schedule, tool fault and kill. Defaults to 1. */
  seed?: number;
  /** Longest a run may take, in milliseconds, before it counts as hung. Defaults to 30_000. */
  capMs?: number;
  /** Called with each scorecard as soon as it is ready (progress). Defaults to none. */
  onScorecard?: (scorecard: Scorecard) => void;
  /** Cancels the suite: runs under way are aborted and `runChaos` rejects with `run.cancelled`. Defaults to none. */
  signal?: AbortSignal;
}

/** Everything a chaos run measured: what the table, `--json` and the HTML report show. */
export interface ChaosReport {
  readonly seed: number;
  readonly runs: number;
  readonly capMs: number;
  readonly task: string;
  /** When the suite started (ISO 8601) and how long it took, in milliseconds. */
  readonly startedAt: string;
  readonly durationMs: number;
  readonly subjects: readonly {
    readonly name: string;
    readonly calibration: Calibration;
    /** Its fault-free nested run (a parent calling a child agent), when a nested scenario ran and it nests. */
    readonly nestedCalibration?: Calibration;
    /** Its fault-free run with a handoff to a child agent, when a handoff scenario ran and it hands over. */
    readonly handoffCalibration?: Calibration;
  }[];
  readonly scenarios: readonly {
    readonly name: string;
    readonly title: string;
    readonly description: string;
    readonly goals: readonly GoalName[];
  }[];
  /** One per scenario and subject, scenario by scenario. */
  readonly scorecards: readonly Scorecard[];
}

const OPTION_KEYS = Object.keys({
  subjects: true,
  task: true,
  scenarios: true,
  runs: true,
  seed: true,
  capMs: true,
  onScorecard: true,
  signal: true,
} satisfies Record<keyof ChaosOptions, true>);

/**
 * Runs each subject through each scenario on the simulated provider and scores it. Each subject is first run once
 * without faults (its calibration: the requests and answer of a run that meets nothing). Scenarios run one after
 * another; within one, all runs are under way at once.
 *
 * @example
 *   const report = await runChaos({ subjects: [keelSubject({ build })], task: 'What is the weather in Paris?',
 *     scenarios: ['transient-30', 'outage-fallback'], runs: 20 });
 *   console.log(renderTable(report));
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  if (typeof options !== 'object' || options === null)
    throwOptionError({ where: 'runChaos()', option: 'options', message: 'options must be an object' });
  rejectUnknownOptions(options, OPTION_KEYS, { where: 'runChaos()' });
  const { subjects, task, runs = 50, seed = 1, capMs = 30_000 } = options;
  if (!Array.isArray(subjects) || subjects.length === 0)
    throwOptionError({
      where: 'runChaos()',
      option: 'subjects',
      message: 'subjects must name at least one subject',
    });
  const names = subjects.map((subject) => subject.name);
  if (new Set(names).size !== names.length)
    throwOptionError({
      where: 'runChaos()',
      option: 'two',
      message: `two subjects share a name (${names.join(', ')})`,
    });
  if (typeof task !== 'string' || task.trim() === '')
    throwOptionError({ where: 'runChaos()', option: 'task', message: 'task must be a non-empty string' });
  if (!Number.isInteger(runs) || runs < 1 || runs > 10_000)
    throwOptionError({
      where: 'runChaos()',
      option: 'runs',
      message: `runs must be an integer from 1 to 10000, got ${runs}`,
    });
  if (!Number.isSafeInteger(seed))
    throwOptionError({
      where: 'runChaos()',
      option: 'seed',
      message: `seed must be an integer, got ${seed}`,
    });
  if (!Number.isInteger(capMs) || capMs < 100)
    throwOptionError({
      where: 'runChaos()',
      option: 'capMs',
      message: `capMs must be an integer of at least 100, got ${capMs}`,
    });
  const scenarios = selectScenarios(
    options.scenarios?.map((entry, index) =>
      typeof entry === 'string' ? entry : checkScenario(entry, `runChaos(): scenarios[${index}]`),
    ),
  );
  const scenarioNames = scenarios.map((scenario) => scenario.name);
  if (new Set(scenarioNames).size !== scenarioNames.length)
    throwOptionError({
      where: 'runChaos()',
      option: 'two',
      message: `two scenarios share a name (${scenarioNames.join(', ')})`,
    });
  const started = Date.now();
  const runsIn = (subject: ChaosSubject, scenario: ChaosScenario) =>
    subject.scenarios === undefined || subject.scenarios.includes(scenario.name);
  // A subject limited to scenarios none of which runs is left out altogether (not even calibrated).
  const active = subjects.filter((subject) => scenarios.some((scenario) => runsIn(subject, scenario)));
  const calibrations: ChaosReport['subjects'][number][] = [];
  for (const subject of active) {
    const shapes = new Set(scenarios.filter((scenario) => runsIn(subject, scenario)).map(shapeOf));
    const calibration = await calibrate(subject, task, seed, capMs);
    const nested =
      shapes.has('tool') && subject.nests === true
        ? { nestedCalibration: await calibrate(subject, task, seed, capMs, 'tool') }
        : {};
    const handoff =
      shapes.has('handoff') && subject.handsOff === true
        ? { handoffCalibration: await calibrate(subject, task, seed, capMs, 'handoff') }
        : {};
    calibrations.push({ name: subject.name, calibration, ...nested, ...handoff });
  }
  const scorecards: Scorecard[] = [];
  const { signal } = options;
  const stopIfCancelled = () => {
    if (signal?.aborted === true) {
      throw new KeelError('run.cancelled', 'The chaos suite was cancelled', { cause: signal.reason });
    }
  };
  for (const scenario of scenarios) {
    for (const [index, subject] of active.entries()) {
      if (!runsIn(subject, scenario)) continue;
      stopIfCancelled();
      const calibrated = calibrations[index]!;
      const shape = shapeOf(scenario);
      const calibration =
        shape === 'single'
          ? calibrated.calibration
          : shape === 'tool'
            ? calibrated.nestedCalibration
            : calibrated.handoffCalibration;
      if (calibration === undefined) {
        const scorecard = scorecardOf(cannotNest(scenario, subject, calibrated.calibration));
        scorecards.push(scorecard);
        options.onScorecard?.(scorecard);
        continue;
      }
      const run = {
        subject,
        scenario,
        calibration,
        runs,
        seed,
        task,
        capMs,
        ...(signal === undefined ? {} : { signal }),
      };
      const observation =
        scenario.crash === true
          ? await runCrashScenario(run)
          : scenario.workers !== undefined
            ? await runFleetScenario(run)
            : await runScenario(run);
      stopIfCancelled();
      const scorecard = scorecardOf(observation);
      scorecards.push(scorecard);
      options.onScorecard?.(scorecard);
    }
  }
  return {
    seed,
    runs,
    capMs,
    task,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    subjects: calibrations,
    scenarios: scenarios.map(({ name, title, description, goals }) => ({ name, title, description, goals })),
    scorecards,
  };
}

/** A nested scenario for a subject that cannot nest (or hand over): skipped, its numbers empty. */
function cannotNest(
  scenario: ChaosScenario,
  subject: ChaosSubject,
  calibration: Calibration,
): ScenarioObservation {
  const now = Date.now();
  return {
    scenario,
    subject: subject.name,
    startedAtMs: now,
    finishedAtMs: now,
    runs: [],
    requests: [],
    effects: [],
    breakerMoves: [],
    windows: [],
    requestsPerCleanRun: calibration.requestsPerRun,
    skipped:
      scenario.handoff === true
        ? 'the subject cannot hand the conversation over to a child agent'
        : 'the subject cannot run a child agent as a tool',
  };
}
