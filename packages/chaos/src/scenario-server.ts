import { costOfUsage, DEFAULT_PRICES } from '@keel/core/adapter';
import {
  type FaultSchedule,
  SIMULATED_FALLBACK_MODEL,
  SIMULATED_MODEL,
  type SimulatedModelOptions,
  type SimulatedServer,
  startSimulatedServer,
} from '@keel/simulated';
import type { EnvironmentSpec } from './environment.js';
import { recallingBrain } from './recalling-brain.js';
import type { ChaosScenario, ModelFaults } from './scenario.js';
import type { RequestSample, WindowSample } from './scorecard.js';

/** The simulated model's price: keel's built-in one (priced as gpt-4.1-mini). */
const SIMULATED_PRICE = DEFAULT_PRICES.simulated!;

import { seedOf } from './seeds.js';
import type { ChaosModel, ChaosSubject } from './subject.js';

/** What a fault-free run of a subject looks like: the baseline every scenario is measured against. */
export interface Calibration {
  /** Upstream requests the run needed. */
  readonly requestsPerRun: number;
  /** Tool calls that ran to their end. */
  readonly effectsPerRun: number;
  /** The tools those calls were of: a completed run must have called each of them to its end too. */
  readonly tools: readonly string[];
  /** Its answer: a completed run under faults must give the same (see `answerCheck`). */
  readonly answer: string;
  /** The size of its first prompt, and of its largest, in the server's tokens. */
  readonly firstPromptTokens: number;
  readonly largestPromptTokens: number;
  /** How long it took, in milliseconds. */
  readonly durationMs: number;
}

/** A scenario's server, set up for one subject, with its models not yet faulty. */
export interface ScenarioServer {
  readonly server: SimulatedServer;
  /** The models the subject is given, primary first. */
  readonly models: readonly ChaosModel[];
  /** The child agent's models, primary first, in a nested scenario (see `ChaosScenario.child`); else none. */
  readonly childModels?: readonly ChaosModel[];
  /** The primary model's schedule (for the `schedule` minimum). */
  readonly schedule: FaultSchedule;
  /**
   * Starts the scenario's faults, with outage windows counted from `startedAtMs` (when the first run is due);
   * returns the windows in milliseconds since the epoch.
   */
  arm(startedAtMs: number): WindowSample[];
}

/** The name of fallback `index` (from 0) on a scenario's server. */
export function fallbackName(index: number): string {
  return index === 0 ? SIMULATED_FALLBACK_MODEL : `${SIMULATED_FALLBACK_MODEL}-${index + 1}`;
}

/** The primary model of a nested scenario's child agent (its fallbacks are `sim-child-fallback`, ...). */
export const CHILD_MODEL = 'sim-child';

/** The name of the child agent's fallback `index` (from 0) in a nested scenario. */
export function childFallbackName(index: number): string {
  return index === 0 ? `${CHILD_MODEL}-fallback` : `${CHILD_MODEL}-fallback-${index + 1}`;
}

/** What `scenario` does to `model`: the primary's faults, a fallback's, or (models of a nested child) the child's. */
function faultsOf(scenario: ChaosScenario, model: string): ModelFaults | undefined {
  if (model === CHILD_MODEL || model.startsWith(`${CHILD_MODEL}-`)) return scenario.child;
  return model === SIMULATED_MODEL ? scenario.primary : scenario.fallbacks;
}

/**
 * Starts the simulated server for `scenario`: the primary and as many fallbacks as the subject uses (none when the
 * scenario offers none), each with a fault schedule seeded by (seed, scenario, model), and the context windows the
 * scenario asks for, and its quota (enforced from the start: nothing is sent before `arm`). Faults start with `arm`,
 * once the subject is ready.
 */
export async function startScenarioServer(
  scenario: ChaosScenario,
  subject: ChaosSubject,
  calibration: Calibration | undefined,
  seed: number,
): Promise<ScenarioServer> {
  const fallbacks = scenario.fallbacksOffered === false ? 0 : subject.fallbacks;
  const names = [SIMULATED_MODEL, ...Array.from({ length: fallbacks }, (_, index) => fallbackName(index))];
  const windows = contextWindows(scenario, calibration);
  const parentModels: ChaosModel[] = names.map((name, index) => {
    const window = index === 0 ? windows.primary : windows.fallbacks;
    return window === undefined ? { name } : { name, contextWindowTokens: window };
  });
  const childModels: ChaosModel[] | undefined =
    scenario.child === undefined
      ? undefined
      : [CHILD_MODEL, ...Array.from({ length: fallbacks }, (_, index) => childFallbackName(index))].map(
          (name) => ({ name }),
        );
  // Every model the server serves: the parent's, then the child's.
  const models = [...parentModels, ...(childModels ?? [])];
  const settings = (index: number): ModelFaults | undefined => faultsOf(scenario, models[index]!.name);
  const scheduleOf = (index: number): FaultSchedule => scenarioSchedule(scenario, models[index]!.name, seed);
  const quiet = Object.fromEntries(
    models.map((model): [string, SimulatedModelOptions] => [
      model.name,
      model.contextWindowTokens === undefined ? {} : { contextWindowTokens: model.contextWindowTokens },
    ]),
  );
  const server = await startSimulatedServer({
    models: quiet,
    ...(scenario.recallFailedCalls === true ? { brain: recallingBrain } : {}),
    ...(scenario.quota === undefined ? {} : { quota: scenario.quota }),
  });
  return {
    server,
    models: parentModels,
    ...(childModels === undefined ? {} : { childModels }),
    // The schedule the `schedule` minimum reads: the child's primary when it is the one that meets faults.
    schedule: scheduleOf(childModels === undefined ? 0 : parentModels.length),
    arm(startedAtMs) {
      const armed: WindowSample[] = [];
      const offsetMs = startedAtMs - server.epochMs;
      models.forEach((model, index) => {
        const outages = (settings(index)?.outages ?? []).map((window) => ({
          ...window,
          startMs: window.startMs + offsetMs,
          endMs: window.endMs + offsetMs,
        }));
        for (const window of outages) {
          armed.push({
            model: model.name,
            startMs: server.epochMs + window.startMs,
            endMs: server.epochMs + window.endMs,
            fault: window.fault ?? 'unavailable',
          });
        }
        server.configureModel(model.name, {
          ...quiet[model.name],
          faults: scheduleOf(index),
          ...(outages.length === 0 ? {} : { outages }),
        });
      });
      return armed;
    },
  };
}

/**
 * The fault schedule of `model` (the primary, or a fallback) in `scenario`: its rates, Retry-After and hang length,
 * drawn from a stream seeded by (seed, scenario, model). The same arguments always give the same schedule.
 */
export function scenarioSchedule(scenario: ChaosScenario, model: string, seed: number): FaultSchedule {
  const faults = faultsOf(scenario, model);
  const schedule: FaultSchedule = { seed: seedOf(seed, scenario.name, model) };
  if (faults?.rates !== undefined) schedule.rates = { ...faults.rates };
  if (faults?.retryAfterMs !== undefined) schedule.retryAfterMs = faults.retryAfterMs;
  if (faults?.hangMs !== undefined) schedule.hangMs = faults.hangMs;
  return schedule;
}

/** The chat completion requests `server` received, as samples. */
export function requestSamples(server: SimulatedServer): RequestSample[] {
  return server.requests
    .filter((record) => record.path === '/v1/chat/completions' && record.model !== undefined)
    .map((record) => ({
      model: record.model!,
      atMs: record.receivedAtMs,
      down: record.down,
      fault: record.fault,
      costUsd:
        record.completionTokens === undefined
          ? 0
          : costOfUsage(
              { inputTokens: record.promptTokens ?? 0, outputTokens: record.completionTokens },
              SIMULATED_PRICE,
            ),
    }));
}

function contextWindows(
  scenario: ChaosScenario,
  calibration: Calibration | undefined,
): { primary?: number; fallbacks?: number } {
  if (scenario.tightContextWindow !== true || calibration === undefined) return {};
  const { firstPromptTokens: first, largestPromptTokens: largest } = calibration;
  // Between the first prompt and the largest, so that the run outgrows it mid-way; a run of one request cannot, and
  // then overflows at once.
  const primary = largest > first ? first + Math.floor((largest - first) / 2) : Math.max(1, first - 1);
  return { primary, fallbacks: largest * 4 };
}

/**
 * What the subject's environment is made from, for one scenario run on `scenarioServer` (in this process or in a
 * worker's): the server, its models (the child's too in a nested scenario), the run's directory and seed, the
 * scenario's tool faults, and whether the subject streams or hands over.
 */
export function environmentSpecOf(
  scenario: ChaosScenario,
  scenarioServer: ScenarioServer,
  directory: string,
  seed: number,
): EnvironmentSpec {
  return {
    scenario: scenario.name,
    baseUrl: scenarioServer.server.url,
    models: scenarioServer.models,
    directory,
    seed,
    ...(scenario.tools === undefined ? {} : { toolFaults: scenario.tools }),
    ...(scenario.stream === true ? { stream: true } : {}),
    ...(scenarioServer.childModels === undefined ? {} : { childModels: scenarioServer.childModels }),
    ...(scenario.handoff === true ? { handoff: true } : {}),
  };
}
