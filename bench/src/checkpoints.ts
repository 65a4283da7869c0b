// The cost of a durable step as a run grows: runs of 10, 100 and 1,000 steps, and 10-step runs that start with 10,
// 100 and 1,000 messages of earlier conversation, on SQLite and PostgreSQL stores, without a store, and with
// LangGraph.js's SQLite saver (the same ReAct run: a tool call a step, then the answer); then the 5-step run of keel
// on SQLite against LangGraph's saver, each side in a process of its own (measureIsolated, fair.ts).
//
// The method: no forced GC anywhere (a full collection before a timed block deoptimises keel's hot code); each subject
// warmed on each case (KEEL_BENCH_WARM_MS, 500 ms of CPU) and every block sized, from a pilot run, to about the same
// CPU time (KEEL_BENCH_BLOCK_MS, 50 ms); keel's subjects of a case take turns in an order that rotates each round,
// LangGraph measured after them (its garbage would land in their blocks); each figure is the median over rounds of
// the block's CPU time per step (this process: PostgreSQL's own CPU is not in it, its round trips are in the wall
// time), and each comparison is the min / median / max of its per-round ratios. The machine's load is printed before
// and after.
// Run: npm run bench:checkpoints  (starts a private PostgreSQL on 127.0.0.1 through scripts/postgres.sh, then stops
// it). KEEL_BENCH_ROUNDS (5), KEEL_BENCH_BLOCK_MS (50), KEEL_BENCH_ONLY=sqlite (no PostgreSQL) or postgres (keel on
// PostgreSQL alone), KEEL_BENCH_CASES (steps,history,history+,five: the parts to run, all by default; e.g. `history`
// alone, under a minute), KEEL_BENCH_PEER_STEPS_MAX=1000 (LangGraph's 1,000-step run too: a minute or more a round),
// KEEL_BENCH_FIVE_ROUNDS (15: rounds of the 5-step comparison).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';
import { keelRunner, type Runner } from './durable-runs.js';
import { measureIsolated, ratioSpread } from './fair.js';
import { FIVE_STEPS } from './five-step-subjects.js';
import { percentile } from './statistics.js';

const ROUNDS = Number(process.env.KEEL_BENCH_ROUNDS ?? 5);
/** The CPU time each block aims at. */
const BLOCK_MS = Number(process.env.KEEL_BENCH_BLOCK_MS ?? 50);
const ONLY = process.env.KEEL_BENCH_ONLY;
/** The parts to run: `steps`, `history`, `history+` (steps 11-20 after the history) and `five` (against LangGraph). */
const PARTS = new Set((process.env.KEEL_BENCH_CASES ?? 'steps,history,history+,five').split(','));
/** The 1,000 figures within this of the 10 figures. */
const GROWTH_TARGET = 1.5;
/** keel's durable step on SQLite against LangGraph's saver, on the 5-step run. */
const PEER_TARGET = 20;
const LENGTHS = [10, 100, 1_000] as const;
/** LangGraph's runs are this long at most (KEEL_BENCH_PEER_STEPS_MAX, 100): its 1,000-step run takes a minute or more. */
const PEER_STEPS_MAX = Number(process.env.KEEL_BENCH_PEER_STEPS_MAX ?? 100);
/** CPU each subject runs each case before it is measured (KEEL_BENCH_WARM_MS, 500). */
const WARM_MS = Number(process.env.KEEL_BENCH_WARM_MS ?? 500);
/** Rounds of the 5-step comparison (KEEL_BENCH_FIVE_ROUNDS): its blocks are short, its ratio wants many. */
const FIVE_ROUNDS = Number(process.env.KEEL_BENCH_FIVE_ROUNDS ?? 15);

/** One run shape: `steps` steps after `history` messages of earlier conversation. */
interface Case {
  readonly label: string;
  readonly steps: number;
  readonly history: number;
}

interface Subject {
  readonly name: string;
  /** A runner of the case, or undefined when the subject does not take part. */
  readonly runnerOf: (shape: Case) => Runner | undefined;
}

/** CPU and wall time of one block of `runs` runs, per step (microseconds). */
async function block(run: Runner, runs: number, steps: number): Promise<{ cpuUs: number; wallUs: number }> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let index = 0; index < runs; index++) await run();
  const wallUs = (performance.now() - start) * 1_000;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuUs: (cpu.user + cpu.system) / (runs * steps), wallUs: wallUs / (runs * steps) };
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((left, right) => left - right),
    0.5,
  );
}

function spread(values: readonly number[]): string {
  const sorted = [...values].sort((left, right) => left - right);
  return `${sorted[0]!.toFixed(2)} / ${median(sorted).toFixed(2)} / ${sorted.at(-1)!.toFixed(2)}`;
}

const verdicts: boolean[] = [];
function verdict(pass: boolean): string {
  verdicts.push(pass);
  return pass ? 'PASS' : 'FAIL';
}

function printLoad(when: string): void {
  const [one, five, fifteen] = loadavg().map((value) => value.toFixed(2));
  console.log(`load average ${when}: ${one} ${five} ${fifteen} (1, 5, 15 min)`);
}

/** CPU milliseconds of this process since `start`. */
function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1_000;
}

/** Per-step CPU samples (one per round) of every subject on every case, blocks in rotating order. */
async function measure(
  cases: readonly Case[],
  subjects: readonly Subject[],
): Promise<Map<string, Array<{ cpuUs: number; wallUs: number }>>> {
  const samples = new Map<string, Array<{ cpuUs: number; wallUs: number }>>();
  const plans: Array<{ key: string; run: Runner; runs: number; steps: number }> = [];
  for (const shape of cases) {
    for (const subject of subjects) {
      const run = subject.runnerOf(shape);
      if (run === undefined) continue;
      // Warmed for WARM_MS of CPU (at least one run: the JIT and the store's page cache reach their steady state), a
      // pilot run, then blocks of about BLOCK_MS of CPU.
      const warmStart = process.cpuUsage();
      do await run();
      while (cpuMsSince(warmStart) < WARM_MS);
      const pilot = await block(run, 1, shape.steps);
      const runs = Math.max(1, Math.min(500, Math.round((BLOCK_MS * 1_000) / (pilot.cpuUs * shape.steps))));
      const key = `${subject.name}|${shape.label}`;
      plans.push({ key, run, runs, steps: shape.steps });
      samples.set(key, []);
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const shape of cases) {
      const own = plans.filter((plan) => plan.key.endsWith(`|${shape.label}`));
      for (let turn = 0; turn < own.length; turn++) {
        const plan = own[(turn + round) % own.length]!;
        samples.get(plan.key)!.push(await block(plan.run, plan.runs, plan.steps));
      }
    }
  }
  return samples;
}

function report(
  cases: readonly Case[],
  subjects: readonly Subject[],
  samples: Map<string, Array<{ cpuUs: number; wallUs: number }>>,
  dimension: 'steps' | 'history',
): void {
  const shapes = cases.filter((shape) => shape.label.startsWith(`${dimension} `));
  console.log(
    `\nper-step cost by ${dimension === 'steps' ? 'run length (steps, no earlier history)' : 'history (10-step runs after N earlier messages)'}: ` +
      'CPU us a step, median of rounds (wall us)',
  );
  console.log(`${'subject'.padEnd(22)}${shapes.map((shape) => shape.label.padStart(22)).join('')}`);
  for (const subject of subjects) {
    const cells = shapes.map((shape) => {
      const rows = samples.get(`${subject.name}|${shape.label}`);
      if (rows === undefined) return '-'.padStart(22);
      const cpu = median(rows.map((row) => row.cpuUs));
      const wall = median(rows.map((row) => row.wallUs));
      return `${cpu.toFixed(1)} (${wall.toFixed(0)})`.padStart(22);
    });
    console.log(`${subject.name.padEnd(22)}${cells.join('')}`);
  }
  const first = shapes[0]!;
  const last = shapes.at(-1)!;
  for (const subject of subjects) {
    const small = samples.get(`${subject.name}|${first.label}`);
    const large = samples.get(`${subject.name}|${last.label}`);
    if (small === undefined || large === undefined) continue;
    const ratios = large.map((row, index) => row.cpuUs / small[index]!.cpuUs);
    const keel = subject.name.startsWith('keel');
    const durable = keel && subject.name !== 'keel, no store';
    const target = durable
      ? `  target <= ${GROWTH_TARGET}x: ${verdict(median(ratios) <= GROWTH_TARGET)}`
      : '';
    console.log(
      `  ${subject.name}: ${last.label} / ${first.label} per round (min / median / max): ${spread(ratios)}${target}`,
    );
  }
}

/**
 * What a step costs once the run's input is stored (a run stores its input once, whatever its length): the 20-step
 * run's CPU time less the 10-step run's, over the ten steps between, per round.
 */
function marginal(
  subjects: readonly Subject[],
  samples: Map<string, Array<{ cpuUs: number; wallUs: number }>>,
): void {
  console.log(
    '\nper-step cost after N earlier messages, once the input is stored (steps 11-20 of a run): CPU us',
  );
  console.log(
    `${'subject'.padEnd(22)}${LENGTHS.map((history) => `history ${history}`.padStart(22)).join('')}`,
  );
  for (const subject of subjects) {
    const perRound = LENGTHS.map((history) => {
      const ten = samples.get(`${subject.name}|history ${history}`);
      const twenty = samples.get(`${subject.name}|history+ ${history}`);
      if (ten === undefined || twenty === undefined) return undefined;
      return twenty.map((row, index) => (row.cpuUs * 20 - ten[index]!.cpuUs * 10) / 10);
    });
    if (perRound.some((rows) => rows === undefined)) continue;
    const rows = perRound as number[][];
    console.log(
      `${subject.name.padEnd(22)}${rows.map((values) => median(values).toFixed(1).padStart(22)).join('')}`,
    );
    const ratios = rows[2]!.map((value, index) => value / rows[0]![index]!);
    const durable = subject.name.startsWith('keel') && subject.name !== 'keel, no store';
    const target = durable
      ? `  target <= ${GROWTH_TARGET}x: ${verdict(median(ratios) <= GROWTH_TARGET)}`
      : '';
    console.log(
      `  ${subject.name}: history 1000 / history 10 per round (min / median / max): ${spread(ratios)}${target}`,
    );
  }
}

/**
 * The 5-step run: keel on SQLite against LangGraph's saver, each in a process of its own (two libraries in one
 * process share a heap: one's garbage is collected in the other's blocks), in FIVE_ROUNDS rounds after ten warm-up
 * rounds, blocks of four times BLOCK_MS.
 */
async function fiveSteps(): Promise<void> {
  const measured = await measureIsolated(
    [
      {
        name: 'keel',
        moduleUrl: new URL('./five-step-subjects.js', import.meta.url).href,
        factory: 'keelFiveSteps',
      },
      {
        name: 'langgraph',
        moduleUrl: new URL('./langgraph-peer.js', import.meta.url).href,
        factory: 'langGraphFiveSteps',
      },
    ],
    // Ten warm-up rounds (about 2 s of CPU a side): both sides' code and SQLite page caches reach their steady state.
    { rounds: FIVE_ROUNDS, blockCpuMs: BLOCK_MS * 4, calibrationUnits: 20, warmupRounds: 10 },
  );
  const keel = measured.get('keel')!;
  const peer = measured.get('langgraph')!;
  const ratios = ratioSpread(peer, keel);
  console.log(
    `\n5-step run on SQLite, each side in a process of its own: keel ${(keel.medianUs / FIVE_STEPS).toFixed(1)} us a ` +
      `step vs LangGraph.js + SqliteSaver ${(peer.medianUs / FIVE_STEPS).toFixed(1)} us (CPU, median of ${FIVE_ROUNDS} rounds)`,
  );
  console.log(
    `  LangGraph / keel per round (min / median / max): ${ratios.min.toFixed(2)} / ${ratios.median.toFixed(2)} / ` +
      `${ratios.max.toFixed(2)}  target >= ${PEER_TARGET}x: ${verdict(ratios.median >= PEER_TARGET)}`,
  );
}

/** LangGraph's saver as a subject of the growth tables (imported now, once keel's figures are taken). */
async function langGraphSubject(directory: string): Promise<Subject> {
  const { langGraphRunner } = await import('./langgraph-peer.js');
  let peer = 0;
  return {
    name: 'langgraph, sqlite',
    runnerOf: (shape) => {
      // About 15-20 ms of CPU a step (60-100 s a 1,000-step run on a loaded machine): only when asked for.
      if (shape.steps > PEER_STEPS_MAX) return undefined;
      const runner = langGraphRunner(join(directory, `langgraph-${peer++}.db`), shape.steps, shape.history);
      return () => runner.run();
    },
  };
}

async function main(): Promise<void> {
  printLoad('before');
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-'));
  const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));
  const port = process.env.KEEL_POSTGRES_PORT ?? '54339';
  const url =
    ONLY === 'sqlite'
      ? undefined
      : execFileSync('bash', [script, 'start', port], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  const stores: RunStore[] = [];
  const open = <Store extends RunStore>(store: Store): Store => {
    stores.push(store);
    return store;
  };
  try {
    const sqlite = open(new SqliteRunStore(join(directory, 'keel.db')));
    const postgres = url === undefined ? undefined : open(new PostgresRunStore({ connectionString: url }));
    const everyKeel: Subject[] = [
      { name: 'keel, no store', runnerOf: (shape) => keelRunner(undefined, shape.steps, shape.history) },
      { name: 'keel, sqlite', runnerOf: (shape) => keelRunner(sqlite, shape.steps, shape.history) },
      ...(postgres === undefined
        ? []
        : [
            {
              name: 'keel, postgres',
              runnerOf: (shape: Case) => keelRunner(postgres, shape.steps, shape.history),
            },
          ]),
    ];
    const keelSubjects = everyKeel.filter(
      (subject) => ONLY !== 'postgres' || subject.name === 'keel, postgres',
    );
    const cases: Case[] = [
      ...LENGTHS.map((steps) => ({ label: `steps ${steps}`, steps, history: 0 })),
      ...LENGTHS.map((history) => ({ label: `history ${history}`, steps: 10, history })),
      // The same after ten more steps: the difference is what a step costs once the input is stored.
      ...LENGTHS.map((history) => ({ label: `history+ ${history}`, steps: 20, history })),
    ].filter((shape) => PARTS.has(shape.label.split(' ')[0]!));
    console.log(
      `durable runs: ${ROUNDS} rounds; blocks of about ${BLOCK_MS} ms of CPU (at least one run); ` +
        'SQLite WAL, synchronous=NORMAL on both sides; PostgreSQL on loopback',
    );
    // What each side writes, counted on the 5-step run.
    console.log(
      "what each side writes: keel, 1 transaction a step (the step's `lookup` tool is idempotent, so its call's start " +
        "and result go with the step's end: the model response, the ledger entry, the small state, the new messages " +
        "and journal entries; a tool that is not idempotent adds one before it runs), and 1 for the run's creation " +
        "(its input messages as one row of the run's message log); LangGraph's saver a checkpoint per super-step " +
        "(agent, tools: 2 a step), each with the whole message list, and each super-step's pending writes (about 4 " +
        'commits a step: 11 checkpoints and 10 write batches a 5-step run)',
    );
    // keel's subjects, then LangGraph's, imported only then: its modules set up process-wide state of their own, and
    // in one rotation its garbage (megabytes a run at 1,000 messages) would be collected in keel's blocks. Each
    // subject's growth compares its own figures.
    const samples = await measure(cases, keelSubjects);
    const subjects = [...keelSubjects];
    if (ONLY !== 'postgres') {
      const peer = await langGraphSubject(directory);
      subjects.push(peer);
      for (const [key, rows] of await measure(cases, [peer])) samples.set(key, rows);
    }
    if (PARTS.has('steps')) report(cases, subjects, samples, 'steps');
    if (PARTS.has('history')) report(cases, subjects, samples, 'history');
    if (PARTS.has('history') && PARTS.has('history+')) marginal(subjects, samples);

    // The 5-step run: keel on SQLite against LangGraph's saver.
    if (PARTS.has('five') && ONLY !== 'postgres') await fiveSteps();
  } finally {
    for (const store of stores) await store.close();
    if (url !== undefined) execFileSync('bash', [script, 'stop', port]);
    rmSync(directory, { recursive: true, force: true });
  }
  printLoad('after');
  console.log(`${verdicts.filter(Boolean).length} of ${verdicts.length} targets met`);
}

await main();
