// What keel's policies cost per call on the success path, beside a bare async call and beside cockatiel, opossum and
// p-retry measured in the same run; what a call costs while a breaker is open; whether a million composed calls
// leave the heap where it was; and a PASS/FAIL verdict against keel's targets.
// Run: npm run bench:policies   (or node bench/dist/policies.js, which restarts itself with --expose-gc)
// Environment: KEEL_BENCH_ROUNDS (default 5), KEEL_BENCH_HEAP_CALLS (default 1_000_000).
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { printLoadAround } from './fair.js';
import { type BenchCase, type Measurement, measureAll } from './harness.js';
import { type HeapSeries, heapSeries } from './heap.js';
import { composedPipeline, keelCases } from './keel-cases.js';
import { openBreakers } from './open-breakers.js';
import { peerCases } from './peer-cases.js';
import { bare, readsSignal } from './subjects.js';
import { checkTargets, formatBytes, observations } from './verdict.js';

const ROUNDS = Number(process.env.KEEL_BENCH_ROUNDS ?? 5);
const HEAP_CALLS = Number(process.env.KEEL_BENCH_HEAP_CALLS ?? 1_000_000);

function printTable(measurements: ReadonlyMap<string, Measurement>, bareNs: number): void {
  let section = '';
  for (const measurement of measurements.values()) {
    const { benchCase, medianNs, minNs, maxNs, callsPerRound } = measurement;
    if (benchCase.section !== section) {
      section = benchCase.section;
      console.log(`\n${section}`);
      console.log(
        `  ${'case'.padEnd(50)} ${'ns/call'.padStart(8)} ${'+ vs bare'.padStart(10)}   ${'rounds min..max'.padEnd(17)} calls/round`,
      );
    }
    const added = benchCase.id === 'bare' ? '' : `+${(medianNs - bareNs).toFixed(0)}`;
    const range = `${minNs.toFixed(0)}..${maxNs.toFixed(0)}`;
    console.log(
      `  ${benchCase.label.padEnd(50)} ${medianNs.toFixed(0).padStart(8)} ${added.padStart(10)}   ${range.padEnd(17)} ${callsPerRound.toLocaleString('en-US')}`,
    );
  }
}

function printHeap(series: HeapSeries): void {
  const points = series.points
    .map(([calls, bytes]) => `${(calls / 1000).toFixed(0)}k: ${formatBytes(bytes)}`)
    .join(', ');
  console.log(`  ${series.label}`);
  console.log(`    heap used after full GC: ${points}; growth ${formatBytes(series.growthBytes)}`);
}

async function main(collectGarbage: () => void): Promise<void> {
  const started = performance.now();
  printLoadAround();
  console.log(
    `keel policy benchmark: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
  );
  console.log(
    `CPU ns per call, sequential awaited calls; median of ${ROUNDS} interleaved rounds in rotating order of 100k-1M calls each (about 120 ms of CPU or more), after warm-up, no forced GC`,
  );

  const bareCase: BenchCase = {
    id: 'bare',
    label: 'bare async call (async () => value, awaited)',
    section: 'baseline',
    run: () => bare(),
  };
  const peers = peerCases();
  const open = await openBreakers();
  const cases = [bareCase, ...keelCases(), ...peers.cases, ...open.cases];
  const sectionOrder = [...new Set(cases.map((benchCase) => benchCase.section))];
  const ordered = sectionOrder.flatMap((section) =>
    cases.filter((benchCase) => benchCase.section === section),
  );

  const measurements = await measureAll(cases, {
    rounds: ROUNDS,
    warmupCalls: 50_000,
    targetRoundMs: 120,
    minCalls: 100_000,
    maxCalls: 1_000_000,
    onRound: (round) => process.stderr.write(`  round ${round}/${ROUNDS} done\n`),
  });
  open.assertStillOpen();
  const byId = new Map(ordered.map((benchCase) => [benchCase.id, measurements.get(benchCase.id)!]));
  printTable(byId, byId.get('bare')!.medianNs);

  console.log(`\nheap (--expose-gc), ${HEAP_CALLS.toLocaleString('en-US')} sequential calls each`);
  const callerSignal = new AbortController().signal;
  const heap: HeapSeries[] = [];
  const pipeline = composedPipeline();
  const signalPipeline = composedPipeline();
  for (let index = 0; index < 50_000; index++) {
    await pipeline.execute(bare);
    await signalPipeline.execute(readsSignal, callerSignal);
  }
  heap.push(
    await heapSeries(
      'compose(retry, breaker, timeout, bulkhead), function ignores its signal',
      () => pipeline.execute(bare),
      HEAP_CALLS,
      4,
      collectGarbage,
    ),
  );
  heap.push(
    await heapSeries(
      'the same, function reads its signal, one long-lived caller signal',
      () => signalPipeline.execute(readsSignal, callerSignal),
      HEAP_CALLS,
      4,
      collectGarbage,
    ),
  );
  for (const series of heap) printHeap(series);

  const results = checkTargets(measurements, heap);
  console.log('\nverdict');
  for (const result of results) {
    console.log(`  ${result.pass ? 'PASS' : 'FAIL'}  ${result.target}: ${result.figures}`);
  }
  console.log('\nbeyond the targets');
  for (const line of observations(measurements)) console.log(`  ${line}`);
  const failed = results.filter((result) => !result.pass).length;
  console.log(
    `\n${results.length - failed} of ${results.length} targets met; ran in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );

  for (const breaker of [...peers.opossumBreakers, ...open.opossumBreakers]) breaker.shutdown();
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  // The heap figures need full collections on demand: restart with --expose-gc (npm run bench passes no flags).
  const script = fileURLToPath(import.meta.url);
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', ...process.execArgv, script, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exitCode = child.status ?? 1;
} else {
  main(gc).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
