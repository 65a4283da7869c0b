// The one way benchmarks here compare subjects, so that a ratio means what it says on a shared machine:
// - no forced garbage collection inside (or right before) a timed block: a full GC before each block deoptimises hot
//   code and makes figures depend on block sizes; each subject pays for the garbage it makes, as in production;
// - blocks sized to equal CPU time: each subject's units per block come from a calibration, so that every block costs
//   about the same CPU whatever the subject, and a GC or a neighbour's burst is as likely to land in any of them;
// - subjects in rotating order: in round r the subjects start from the r-th, so none always follows the same one;
// - ratios per round: a peer's cost over the baseline's in the same round (neighbours in time share the machine's
//   load), reported as min / median / max over rounds;
// - the machine's load (`os.loadavg()`) printed before and after, since no figure means much without it.
// - subjects that are different libraries (keel and its peers) each in a process of their own (measureIsolated):
//   in one process they would share a heap (one subject's garbage collected in another's block) and the JIT's view of
//   shared code (zod, used by all, made polymorphic by the others), so that the order of blocks, not the subject,
//   would set the figures.
// Cost is CPU time (user + system of the process, GC threads included), not wall time: waiting for a core that
// another process holds is not the subject's cost.
import { type ChildProcess, fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

/**
 * One thing measured: `run(units)` does `units` units of work (calls, runs, steps) one after the other. It may resolve
 * with the CPU microseconds the block took where it measured them itself (in another process); otherwise this
 * process's CPU time is taken.
 */
export interface FairSubject {
  readonly name: string;
  run(units: number): Promise<number | undefined> | Promise<void>;
}

/** How hard to measure. */
export interface FairOptions {
  /** Rounds counted (each subject once per round). */
  rounds: number;
  /** Rounds run first and not counted, for the JIT (each sizes the blocks again). Defaults to 2. */
  warmupRounds?: number;
  /** CPU milliseconds one block of one subject should cost. */
  blockCpuMs: number;
  /** Units in the calibration block that sizes every subject's blocks. Defaults to 100. */
  calibrationUnits?: number;
  /** Called after each counted round with its number (from 1). */
  onRound?: (round: number) => void;
}

/** What was measured of one subject. */
export interface FairMeasurement {
  readonly name: string;
  /** Units per block. */
  readonly units: number;
  /** CPU microseconds per unit, one entry per counted round, in round order. */
  readonly roundsUs: readonly number[];
  readonly medianUs: number;
  readonly minUs: number;
  readonly maxUs: number;
}

/** Min, median and max of a series. */
export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function spreadOf(values: readonly number[]): Spread {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/** CPU microseconds of the process (user + system) spent in `work`. */
export async function cpuUs(work: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await work();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/**
 * Measures `subjects` fairly (see the top of this file): calibrates each subject's block to `blockCpuMs`, then runs
 * `warmupRounds + rounds` rounds in rotating order, timing each block in CPU time.
 */
async function blockCpuUs(subject: FairSubject, units: number): Promise<number> {
  let reported: number | undefined;
  const used = await cpuUs(async () => {
    const result = await subject.run(units);
    if (typeof result === 'number') reported = result;
  });
  return reported ?? used;
}

export async function measureFairly(
  subjects: readonly FairSubject[],
  options: FairOptions,
): Promise<Map<string, FairMeasurement>> {
  const calibrationUnits = options.calibrationUnits ?? 100;
  const units = new Map<string, number>();
  for (const subject of subjects) {
    await subject.run(calibrationUnits);
    const perUnitUs = (await blockCpuUs(subject, calibrationUnits)) / calibrationUnits;
    units.set(
      subject.name,
      Math.max(1, Math.round((options.blockCpuMs * 1_000) / Math.max(perUnitUs, 0.001))),
    );
  }
  const warmupRounds = options.warmupRounds ?? 2;
  const sizeFor = (perUnitUs: number) =>
    Math.max(1, Math.round((options.blockCpuMs * 1_000) / Math.max(perUnitUs, 0.001)));
  const samples = new Map<string, number[]>(subjects.map((subject) => [subject.name, []]));
  for (let round = 0; round < warmupRounds + options.rounds; round++) {
    for (let offset = 0; offset < subjects.length; offset++) {
      const subject = subjects[(round + offset) % subjects.length]!;
      const count = units.get(subject.name)!;
      const perUnitUs = (await blockCpuUs(subject, count)) / count;
      if (round >= warmupRounds) samples.get(subject.name)!.push(perUnitUs);
      // Sized again after each warm-up round: a cold calibration overstates what a warm unit costs.
      else units.set(subject.name, sizeFor(perUnitUs));
    }
    if (round >= warmupRounds) options.onRound?.(round - warmupRounds + 1);
  }
  const measurements = new Map<string, FairMeasurement>();
  for (const subject of subjects) {
    const roundsUs = samples.get(subject.name)!;
    const spread = spreadOf(roundsUs);
    measurements.set(subject.name, {
      name: subject.name,
      units: units.get(subject.name)!,
      roundsUs,
      medianUs: spread.median,
      minUs: spread.min,
      maxUs: spread.max,
    });
  }
  return measurements;
}

/** A subject living in its own process: `factory`, exported by `moduleUrl`, returns one unit of work. */
export interface IsolatedSubject {
  readonly name: string;
  /** The `import.meta.url`-style URL of the module exporting the factory. */
  readonly moduleUrl: string;
  /** The export's name: a function taking nothing and returning `() => Promise<unknown>`. */
  readonly factory: string;
}

/** A child process running one subject, asked for blocks of units one at a time. */
class SubjectProcess {
  private readonly child: ChildProcess;
  private waiting: ((message: { cpuUs?: number; error?: string; ready?: boolean }) => void) | undefined;
  readonly ready: Promise<unknown>;

  constructor(subject: IsolatedSubject) {
    this.child = fork(
      fileURLToPath(new URL('./fair-child.js', import.meta.url)),
      [subject.moduleUrl, subject.factory],
      {
        execArgv: (process.env.KEEL_BENCH_CHILD_FLAGS ?? '').split(' ').filter(Boolean),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    this.ready = new Promise((resolve) => {
      this.waiting = resolve;
    });
    this.child.on('message', (message: { cpuUs?: number; error?: string }) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.(message);
    });
  }

  /** CPU microseconds the child spent on a block of `units`. */
  blockCpuUs(units: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = (message) => {
        if (message.error !== undefined) reject(new Error(message.error));
        else resolve(message.cpuUs!);
      };
      this.child.send({ units });
    });
  }

  close(): void {
    this.child.kill();
  }
}

/**
 * Like {@link measureFairly}, each subject in a process of its own (started once, warmed, then asked for its blocks
 * in rotating order; the child measures its own CPU time).
 */
export async function measureIsolated(
  subjects: readonly IsolatedSubject[],
  options: FairOptions,
): Promise<Map<string, FairMeasurement>> {
  const processes = subjects.map((subject) => new SubjectProcess(subject));
  try {
    await Promise.all(processes.map((child) => child.ready));
    return await measureFairly(
      subjects.map((subject, index) => ({
        name: subject.name,
        run: (units: number) => processes[index]!.blockCpuUs(units),
      })),
      options,
    );
  } finally {
    for (const child of processes) child.close();
  }
}

/** `peer`'s cost over `baseline`'s, round by round (the same round: the same load), as min / median / max. */
export function ratioSpread(peer: FairMeasurement, baseline: FairMeasurement): Spread {
  return spreadOf(peer.roundsUs.map((value, round) => value / baseline.roundsUs[round]!));
}

/** `12.3x (min 11.0x, max 14.1x)`. */
export function formatRatio(spread: Spread): string {
  return `${spread.median.toFixed(1)}x (rounds: min ${spread.min.toFixed(1)}x, max ${spread.max.toFixed(1)}x)`;
}

/** The machine's load averages over 1, 5 and 15 minutes, beside its core count. */
export function loadLine(when: 'before' | 'after'): string {
  const [one, five, fifteen] = loadavg().map((value) => value.toFixed(2));
  return `machine load ${when}: ${one} ${five} ${fifteen} (1, 5, 15 min; ${cpus().length} cores)`;
}

/**
 * Prints the machine's load now and again when the process exits, so that every figure printed in between can be
 * read against it. Call it first thing in a benchmark.
 */
export function printLoadAround(): void {
  console.log(loadLine('before'));
  process.once('exit', () => console.log(loadLine('after')));
}
