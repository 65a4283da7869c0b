// The measuring loop shared by every case: sequential awaited calls, timed as a block in CPU time, repeated in
// interleaved rounds so that machine noise (another process, a thermal step, a GC of someone else's garbage) hits keel
// and its peers alike. The median of the rounds is reported. The fair method of fair.ts: no forced GC before or in a
// timed block (each case pays for its garbage as it goes), blocks sized to equal CPU time, rotating order.

import { median } from './fair.js';

/** One thing to measure: `run` makes one call and returns its promise (a rejection is expected on reject paths). */
export interface BenchCase {
  /** A stable key the verdict refers to, such as `keel.retry`. */
  readonly id: string;
  /** What is printed. */
  readonly label: string;
  /** The table section the case belongs to. */
  readonly section: string;
  readonly run: () => Promise<unknown>;
}

/** The figures of one case over every round. */
export interface Measurement {
  readonly benchCase: BenchCase;
  /** Calls made in each round. */
  readonly callsPerRound: number;
  /** Nanoseconds per call, one entry per round, in round order. */
  readonly roundsNs: readonly number[];
  readonly medianNs: number;
  readonly minNs: number;
  readonly maxNs: number;
}

/** How hard to measure. */
export interface HarnessOptions {
  /** Rounds per case; the median is reported. */
  rounds: number;
  /** Calls per case before anything is timed, for the JIT. */
  warmupCalls: number;
  /** The time one round of one case should take, which sets its number of calls. */
  targetRoundMs: number;
  /** Fewest and most calls in one round. */
  minCalls: number;
  maxCalls: number;
  /** Called after each round with its number (from 1). */
  onRound?: (round: number) => void;
}

/** Runs `run` `calls` times, one awaited call after the other, and returns CPU nanoseconds per call. */
export async function timeCalls(run: () => Promise<unknown>, calls: number): Promise<number> {
  const started = process.cpuUsage();
  for (let index = 0; index < calls; index++) {
    try {
      await run();
    } catch {
      // Reject-path cases reject on purpose; the loop is the same for every case so that it costs them the same.
    }
  }
  const used = process.cpuUsage(started);
  return ((used.user + used.system) * 1_000) / calls;
}

/**
 * Warms every case, sizes its rounds from a short timed run, then measures the cases round by round: every case once
 * per round, starting one case later each round so that no case always follows the same neighbour.
 */
export async function measureAll(
  cases: readonly BenchCase[],
  options: HarnessOptions,
): Promise<Map<string, Measurement>> {
  const callsPerRound = new Map<string, number>();
  for (const benchCase of cases) await timeCalls(benchCase.run, options.warmupCalls);
  for (const benchCase of cases) {
    const estimateNs = await timeCalls(benchCase.run, options.warmupCalls);
    const calls = Math.round((options.targetRoundMs * 1e6) / Math.max(estimateNs, 1));
    callsPerRound.set(benchCase.id, Math.min(options.maxCalls, Math.max(options.minCalls, calls)));
  }

  const samples = new Map<string, number[]>(cases.map((benchCase) => [benchCase.id, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let offset = 0; offset < cases.length; offset++) {
      const benchCase = cases[(round + offset) % cases.length]!;
      samples.get(benchCase.id)!.push(await timeCalls(benchCase.run, callsPerRound.get(benchCase.id)!));
    }
    options.onRound?.(round + 1);
  }

  const measurements = new Map<string, Measurement>();
  for (const benchCase of cases) {
    const roundsNs = samples.get(benchCase.id)!;
    measurements.set(benchCase.id, {
      benchCase,
      callsPerRound: callsPerRound.get(benchCase.id)!,
      roundsNs,
      medianNs: median(roundsNs),
      minNs: Math.min(...roundsNs),
      maxNs: Math.max(...roundsNs),
    });
  }
  return measurements;
}
