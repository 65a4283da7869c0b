import type { FaultSchedule } from '@keel/simulated';
import type { ChildErrorsSeen } from './child-errors.js';
import { duplicateEffects, type EffectRecord } from './effect-ledger.js';
import type { ChaosScenario, GoalName } from './scenario.js';
import { countInto, percentile, ratio } from './statistics.js';
import type { BreakerMoveRecord } from './subject.js';
import { type Timeline, timelineOf } from './timeline.js';

/** How one run ended, as the runner saw it. */
export interface RunSample {
  readonly runId: string;
  /** When it started and ended (or was given up on, for a hung run), in milliseconds since the epoch. */
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  /**
   * `completed`: the framework returned the whole answer a fault-free run gives; `failed`: it ended typed without it;
   * `untyped`: it ended with something that does not say what happened; `hung`: the wall-clock cap cut it.
   */
  readonly outcome: 'completed' | 'failed' | 'untyped' | 'hung';
  /** What went wrong, for runs that did not complete. */
  readonly code?: string;
}

/** One upstream request, as the simulated server recorded it. */
export interface RequestSample {
  readonly model: string;
  /** When it arrived, in milliseconds since the epoch. */
  readonly atMs: number;
  /** Whether its model was down (inside an outage window) when it arrived. */
  readonly down: boolean;
  /** The fault it got (`none` for a clean answer). */
  readonly fault: string;
  /** What it cost in US dollars (its prompt and answer tokens as the server counted them, at the simulated model's price); 0 when it got no answer. */
  readonly costUsd?: number;
}

/** An outage window, in milliseconds since the epoch. */
export interface WindowSample {
  readonly model: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly fault: string;
}

/** Everything observed while one subject went through one scenario. */
export interface ScenarioObservation {
  readonly scenario: ChaosScenario;
  readonly subject: string;
  /** When the first run was due, in milliseconds since the epoch: the timeline and windows count from it. */
  readonly startedAtMs: number;
  /** When the last run ended or was given up on, in milliseconds since the epoch. */
  readonly finishedAtMs: number;
  readonly runs: readonly RunSample[];
  readonly requests: readonly RequestSample[];
  readonly effects: readonly EffectRecord[];
  readonly breakerMoves: readonly BreakerMoveRecord[];
  readonly windows: readonly WindowSample[];
  /** Upstream requests a fault-free run of this subject needs (measured on a clean server). */
  readonly requestsPerCleanRun: number;
  /** The primary model's schedule, for the `schedule` minimum. */
  readonly schedule?: FaultSchedule;
  /** Why the scenario did not apply (such as no worker for the crash scenario); its numbers are then empty. */
  readonly skipped?: string;
  /** In a nested scenario, the child's failures as the parent's model read them. Defaults to none (not nested). */
  readonly childErrors?: ChildErrorsSeen;
  /**
   * The longest the runner's event loop was late while the scenario ran, in milliseconds (`monitorEventLoopDelay`):
   * a request admitted before a breaker opened may reach the server that much later. Defaults to 0.
   */
  readonly eventLoopDelayMaxMs?: number;
}

/** How a scorecard fares against one goal. */
export interface GoalResult {
  readonly goal: GoalName;
  /** The goal in words, such as `>= 99.9% complete`. */
  readonly target: string;
  /** The measured value in words. */
  readonly actual: string;
  /**
   * Whether it is met; null when it was not exercised: what it requires did not happen, so passing it would say
   * nothing (no breaker opened during an outage or none went half-open before the outage ended, nothing completed,
   * no call of a tool with side effects ran).
   */
  readonly met: boolean | null;
}

/** The scorecard of one subject in one scenario. */
export interface Scorecard {
  readonly scenario: string;
  readonly subject: string;
  readonly skipped?: string;
  /** Wall time the scenario took, from its first run's start to its last run's end, in milliseconds. */
  readonly wallMs: number;
  readonly runs: number;
  readonly completed: number;
  /** completed / runs, from 0 to 1. */
  readonly completionRate: number;
  readonly requests: {
    readonly total: number;
    readonly byModel: Readonly<Record<string, number>>;
    /** Requests that arrived while their model was down. */
    readonly whileDown: number;
  };
  /**
   * Requests answered 429 (the server's quota, or a scheduled `rate_limit`), and their share of every request (0 to 1;
   * null when none was sent). Null for a scenario without a quota.
   */
  readonly refusals: { readonly requests: number; readonly rate: number | null } | null;
  /** Every upstream request the scenario caused, divided by the runs that completed; null when none did. */
  readonly requestsPerCompletedRun: number | null;
  /**
   * What every answered request of the scenario cost (tokens as the server counted them, at keel's price for the
   * simulated model), in US dollars, divided by the runs that completed; null when none did. The same measure for
   * every subject: what the provider would bill per useful run.
   */
  readonly costPerCompletedRunUsd: number | null;
  /** The fewest upstream requests that complete the completed runs (see {@link minimumRequests}). */
  readonly minimumRequests: number;
  /** requests.total / minimumRequests; null when nothing completed. */
  readonly amplification: number | null;
  /**
   * While a model was down and after its breaker opened: the requests that still reached it, and the half-open
   * intervals the breaker went through. Null when no breaker opened during an outage.
   */
  readonly probes: {
    readonly afterBreakerOpened: number;
    readonly halfOpenIntervals: number;
    /** How long after the opening a request still counts as sent before it, in milliseconds. */
    readonly inFlightMs: number;
  } | null;
  /** Run times, from start to end (hung runs count until the cap), in milliseconds. */
  readonly durationMs: {
    readonly p50: number | null;
    readonly p99: number | null;
    readonly max: number | null;
  };
  /** Runs that did not complete, by what went wrong. */
  readonly failuresByCode: Readonly<Record<string, number>>;
  /** Extra runs of calls of tools that are not idempotent. */
  readonly duplicateSideEffects: number;
  /** Executions begun of calls of tools that are not idempotent: the duplicates goal is exercised only above 0. */
  readonly sideEffectExecutions: number;
  readonly untyped: number;
  readonly hung: number;
  /**
   * In a nested scenario: results of the child agent's tool that told the parent's model the child failed, with an
   * error code (typed) or in words only (untyped). Null when the scenario is not nested.
   */
  readonly childErrors: ChildErrorsSeen | null;
  readonly goals: readonly GoalResult[];
  readonly timeline: Timeline;
}

/** The goals' thresholds. */
export const GOAL_TARGETS = { completionRate: 0.999, amplification: 1.1, refusedRate: 0.01 } as const;

/**
 * The fewest upstream requests that complete `completed` runs of `requestsPerCleanRun` requests each: that many with
 * `clean`; with `schedule`, as many as it takes, in expectation, to get that many clean answers when each request is
 * faulted with the schedule's total rate `f` (each faulted request needs one more): needed / (1 - f), rounded up.
 */
export function minimumRequests(
  kind: ChaosScenario['minimum'],
  completed: number,
  requestsPerCleanRun: number,
  schedule?: FaultSchedule,
): number {
  const needed = completed * requestsPerCleanRun;
  if (kind === 'clean' || schedule?.rates === undefined || needed === 0) return needed;
  const faultRate = Object.entries(schedule.rates).reduce(
    (total, [kind, rate]) => (kind === 'none' ? total : total + (rate ?? 0)),
    0,
  );
  // A rate of 1 never answers: nothing could complete, and nothing did (needed is 0 then).
  return faultRate >= 1 ? needed : Math.ceil(needed / (1 - faultRate) - 1e-9);
}

/**
 * How long after a breaker opened a request may still reach the server and count as admitted before the open (sent
 * while the breaker was closed, still in flight), in milliseconds, on an idle event loop. Client and server share one
 * event loop here: the scorecard adds the worst delay the loop had during the scenario (see `eventLoopDelayMaxMs`).
 */
export const IN_FLIGHT_MS = 100;

/**
 * While a model was down: the requests that reached it after its breaker first opened in the window (beyond those
 * still in flight: `inFlightMs`, {@link IN_FLIGHT_MS} by default), and the half-open moves the breaker made until the
 * window closed. Moves reported by several runs are counted once. Null when no breaker opened during an outage.
 */
export function probesWhileDown(
  windows: readonly WindowSample[],
  requests: readonly RequestSample[],
  moves: readonly BreakerMoveRecord[],
  inFlightMs = IN_FLIGHT_MS,
): Scorecard['probes'] {
  const unique = new Map<string, BreakerMoveRecord>();
  for (const move of moves) unique.set(`${move.model}|${move.atMs}|${move.to}`, move);
  let judged = false;
  let afterBreakerOpened = 0;
  let halfOpenIntervals = 0;
  for (const window of windows) {
    const inWindow = [...unique.values()].filter(
      (move) => move.model === window.model && move.atMs >= window.startMs && move.atMs < window.endMs,
    );
    const opened = inWindow
      .filter((move) => move.to === 'open')
      .reduce((first, move) => Math.min(first, move.atMs), Number.POSITIVE_INFINITY);
    if (opened === Number.POSITIVE_INFINITY) continue;
    judged = true;
    afterBreakerOpened += requests.filter(
      (request) =>
        request.model === window.model && request.atMs > opened + inFlightMs && request.atMs < window.endMs,
    ).length;
    halfOpenIntervals += inWindow.filter((move) => move.to === 'half-open' && move.atMs > opened).length;
  }
  return judged ? { afterBreakerOpened, halfOpenIntervals, inFlightMs } : null;
}

/** The scorecard of one observation. */
export function scorecardOf(observation: ScenarioObservation): Scorecard {
  const { scenario, runs, requests } = observation;
  const completed = runs.filter((run) => run.outcome === 'completed').length;
  const byModel: Record<string, number> = {};
  for (const request of requests) countInto(byModel, request.model);
  const failuresByCode: Record<string, number> = {};
  for (const run of runs) {
    if (run.outcome !== 'completed') countInto(failuresByCode, run.code ?? run.outcome);
  }
  const durations = runs.map((run) => run.endedAtMs - run.startedAtMs);
  const minimum = minimumRequests(
    scenario.minimum,
    completed,
    observation.requestsPerCleanRun,
    observation.schedule,
  );
  const amplification = completed === 0 ? undefined : ratio(requests.length, minimum);
  const probes = probesWhileDown(
    observation.windows,
    requests,
    observation.breakerMoves,
    IN_FLIGHT_MS + Math.ceil(observation.eventLoopDelayMaxMs ?? 0),
  );
  const untyped = runs.filter((run) => run.outcome === 'untyped').length;
  const hung = runs.filter((run) => run.outcome === 'hung').length;
  const duplicates = duplicateEffects(observation.effects);
  const refused = requests.filter((request) => request.fault === 'rate_limit').length;
  const partial = {
    refusals:
      scenario.quota === undefined
        ? null
        : { requests: refused, rate: ratio(refused, requests.length) ?? null },
    runs: runs.length,
    completionRate: ratio(completed, runs.length) ?? 0,
    amplification: amplification ?? null,
    probes,
    duplicateSideEffects: duplicates,
    sideEffectExecutions: observation.effects.filter(
      (effect) => !effect.idempotent && effect.phase === 'started',
    ).length,
    untyped,
    hung,
  };
  return {
    scenario: scenario.name,
    subject: observation.subject,
    ...(observation.skipped === undefined ? {} : { skipped: observation.skipped }),
    wallMs: observation.finishedAtMs - observation.startedAtMs,
    completed,
    ...partial,
    requests: {
      total: requests.length,
      byModel,
      whileDown: requests.filter((request) => request.down).length,
    },
    requestsPerCompletedRun: ratio(requests.length, completed) ?? null,
    costPerCompletedRunUsd:
      ratio(
        requests.reduce((sum, request) => sum + (request.costUsd ?? 0), 0),
        completed,
      ) ?? null,
    minimumRequests: minimum,
    durationMs: {
      p50: percentile(durations, 0.5) ?? null,
      p99: percentile(durations, 0.99) ?? null,
      max: durations.length === 0 ? null : Math.max(...durations),
    },
    failuresByCode,
    childErrors: observation.childErrors ?? null,
    goals: observation.skipped === undefined ? scenario.goals.map((goal) => judge(goal, partial)) : [],
    timeline: timelineOf(observation),
  };
}

function judge(
  goal: GoalName,
  card: Pick<
    Scorecard,
    | 'runs'
    | 'completionRate'
    | 'amplification'
    | 'probes'
    | 'duplicateSideEffects'
    | 'sideEffectExecutions'
    | 'untyped'
    | 'hung'
    | 'refusals'
  >,
): GoalResult {
  switch (goal) {
    case 'completion':
      return {
        goal,
        target: `>= ${GOAL_TARGETS.completionRate * 100}% of runs complete (the whole answer, every tool run to its end)`,
        actual: `${formatPercent(card.completionRate)} complete`,
        met: card.runs === 0 ? null : card.completionRate >= GOAL_TARGETS.completionRate,
      };
    case 'amplification':
      return {
        goal,
        target: `<= ${GOAL_TARGETS.amplification}x the minimum requests of the completed runs (needs a completed run)`,
        actual:
          card.amplification === null
            ? 'not exercised: nothing completed'
            : `${card.amplification.toFixed(2)}x`,
        met: card.amplification === null ? null : card.amplification <= GOAL_TARGETS.amplification,
      };
    case 'probes':
      return judgeProbes(card.probes);
    case 'duplicates':
      return {
        goal,
        target: '0 duplicate side effects (needs a call of a tool that is not idempotent)',
        actual:
          card.sideEffectExecutions === 0
            ? 'not exercised: no call of a tool with side effects ran'
            : `${card.duplicateSideEffects} of ${card.sideEffectExecutions} executions`,
        met: card.sideEffectExecutions === 0 ? null : card.duplicateSideEffects === 0,
      };
    case 'refusals': {
      const rate = card.refusals?.rate ?? null;
      return {
        goal,
        target: `<= ${GOAL_TARGETS.refusedRate * 100}% of requests answered 429 (needs a request)`,
        actual:
          rate === null
            ? 'not exercised: no request was sent'
            : `${formatShare(rate)} (${card.refusals!.requests} requests)`,
        met: rate === null ? null : rate <= GOAL_TARGETS.refusedRate,
      };
    }
    case 'typed':
      return {
        goal,
        target: '0 untyped or hung endings',
        actual: `${card.untyped} untyped, ${card.hung} hung`,
        met: card.runs === 0 ? null : card.untyped + card.hung === 0,
      };
  }
}

/**
 * The probe goal. It needs a breaker that opened during an outage and went half-open before the outage ended: with
 * no half-open interval, no request after the opening is allowed, and none reaching the server says nothing about
 * probes (not exercised) while any is a miss.
 */
function judgeProbes(probes: Scorecard['probes']): GoalResult {
  const goal = 'probes';
  const target =
    '<= 1 request per half-open interval while down, once the breaker opened (needs a breaker that opened during an outage)';
  if (probes === null) {
    return { goal, target, actual: 'not exercised: no breaker opened during the outage', met: null };
  }
  const actual =
    `${probes.afterBreakerOpened} requests after the breaker opened, ${probes.halfOpenIntervals} half-open intervals ` +
    `(requests within ${probes.inFlightMs} ms of the opening count as sent before it)`;
  if (probes.halfOpenIntervals === 0 && probes.afterBreakerOpened === 0) {
    return {
      goal,
      target,
      actual: `not exercised: the breaker did not go half-open before the outage ended; ${actual}`,
      met: null,
    };
  }
  return { goal, target, actual, met: probes.afterBreakerOpened <= probes.halfOpenIntervals };
}

/** A rate from 0 to 1 as a percentage with one decimal (`99.9%`). */
export function formatPercent(rate: number): string {
  return `${(Math.floor(rate * 1000) / 10).toFixed(1)}%`;
}

/** A share from 0 to 1 as a percentage with one decimal, rounded up (`0.3%`): a share of failures is never understated. */
export function formatShare(rate: number): string {
  return `${(Math.ceil(rate * 1000 - 1e-9) / 10).toFixed(1)}%`;
}
