// keel's own overhead per agent step (an in-process model and tool that do almost nothing), its whole cost per step
// beside the Vercel AI SDK and the OpenAI Agents SDK on the same run, and the memory per run while 10,000 runs wait on
// their model. Measured by the fair method of fair.ts. Run: npm run bench:agent
// Environment: KEEL_BENCH_ROUNDS (default 7), KEEL_BENCH_BLOCK_MS (CPU ms per block, default 150),
// KEEL_BENCH_ONLY=overhead|peers|memory (one part).
import { agent, type ModelProvider, type ModelRequest } from '@keel/core';
import { PEER_MODULES, PEER_RUN_STEPS } from './agent-peers.js';
import {
  type FairMeasurement,
  formatRatio,
  measureFairly,
  measureIsolated,
  printLoadAround,
  ratioSpread,
  spreadOf,
} from './fair.js';
import { lookupTool, stepModel } from './step-agent.js';

const STEPS_PER_RUN = 10;
const CONCURRENT_RUNS = 10_000;

/**
 * One signal for every bare run: keel makes a run's signal only when something reads it, and on Node 20 making one
 * costs microseconds and leaves garbage that would land in the next subject's block.
 */
const BARE_SIGNAL = new AbortController().signal;

/** The same work without keel: the model and tool called directly, for the baseline. */
async function bareRun(model: ModelProvider): Promise<void> {
  const messages: ModelRequest['messages'] = [{ role: 'user', content: 'go' }];
  const signal = BARE_SIGNAL;
  for (;;) {
    const response = await model.generate({ messages, signal });
    if (response.toolCalls.length === 0) return;
    messages.push({ role: 'assistant', content: response.content, toolCalls: response.toolCalls });
    for (const call of response.toolCalls) {
      const value = await lookupTool.execute(JSON.parse(call.arguments), {
        signal,
        idempotencyKey: 'k',
        runId: 'r',
        step: 0,
        callIndex: 0,
        attempt: 1,
      });
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: JSON.stringify(value),
      });
    }
  }
}

/** Rounds counted, and the CPU time of one block of one subject (see fair.ts). */
const ROUNDS = Number(process.env.KEEL_BENCH_ROUNDS ?? 7);
const BLOCK_CPU_MS = Number(process.env.KEEL_BENCH_BLOCK_MS ?? 150);

const microseconds = (value: number) => `${value.toFixed(2)} µs`;

async function overheadPerStep(): Promise<void> {
  const model = stepModel(STEPS_PER_RUN);
  const assistant = agent({ model, tools: [lookupTool], limits: { maxTurns: STEPS_PER_RUN + 2 } });
  const keelRuns = async (runs: number) => {
    for (let index = 0; index < runs; index++) {
      const result = await assistant.run('go');
      if (result.status !== 'completed')
        throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
    }
  };
  const bareRuns = async (runs: number) => {
    for (let index = 0; index < runs; index++) await bareRun(model);
  };
  const measured = await measureFairly(
    [
      { name: 'keel', run: keelRuns },
      { name: 'bare', run: bareRuns },
    ],
    { rounds: ROUNDS, blockCpuMs: BLOCK_CPU_MS },
  );
  const keel = measured.get('keel')!;
  const bare = measured.get('bare')!;
  const perStep = (value: number) => value / STEPS_PER_RUN;
  const overhead = spreadOf(keel.roundsUs.map((value, round) => perStep(value - bare.roundsUs[round]!)));
  console.log(
    `per step (CPU time, ${STEPS_PER_RUN}-step runs, ${ROUNDS} rounds of ${keel.units} and ${bare.units} runs): ` +
      `keel ${microseconds(perStep(keel.medianUs))}, model + tool alone ${microseconds(perStep(bare.medianUs))}`,
  );
  console.log(
    `keel overhead per step: ${microseconds(overhead.median)} (rounds: ${microseconds(overhead.min)} .. ${microseconds(overhead.max)})  ` +
      `(target <= 20 µs: ${overhead.median <= 20 ? 'PASS' : 'FAIL'})`,
  );
}

/** How many times keel's whole cost per step must be below each peer's (median of per-round ratios). */
const PEER_TARGETS = { aiSdk: 20, openAIAgents: 40 } as const;

/**
 * The whole cost per step (model and tool included: both do almost nothing) of keel, the AI SDK and the OpenAI
 * Agents SDK on the same 5-step run with a zod tool, measured fairly (fair.ts): blocks of equal CPU time, rotating
 * order, no forced GC, each in its own process; each ratio is the peer's cost over keel's in the same round, min / median / max over rounds.
 */
async function loopCostVersusPeers(): Promise<void> {
  const names = { keel: 'keel', aiSdk: 'Vercel AI SDK 6 (generateText)', openAI: 'OpenAI Agents SDK (run)' };
  // Each subject in its own process, which loads its own library alone: in one they would share a heap and zod's
  // compiled code, and a process holding every library makes each subject pay for the others (see agent-peers.ts).
  const measured = await measureIsolated(
    [
      { name: names.keel, ...PEER_MODULES.keel },
      { name: names.aiSdk, ...PEER_MODULES.aiSdk },
      { name: names.openAI, ...PEER_MODULES.openAI },
    ],
    { rounds: ROUNDS, blockCpuMs: BLOCK_CPU_MS, calibrationUnits: 50, warmupRounds: 3 },
  );
  const keel = measured.get(names.keel)!;
  console.log(
    `whole cost per step (CPU time), ${PEER_RUN_STEPS}-step run with a zod tool, ${ROUNDS} rounds in rotating order, ` +
      `blocks of ~${BLOCK_CPU_MS} ms CPU each:`,
  );
  const line = (measurement: FairMeasurement) =>
    `  ${measurement.name.padEnd(32)} ${(measurement.medianUs / PEER_RUN_STEPS).toFixed(2).padStart(8)} µs (median; ${measurement.units} runs a block)`;
  console.log(line(keel));
  const versus = (name: string, target: number) => {
    const peer = measured.get(name)!;
    const ratio = ratioSpread(peer, keel);
    console.log(
      `${line(peer)}  ${formatRatio(ratio)} keel  (target >= ${target}x: ${ratio.median >= target ? 'PASS' : 'FAIL'})`,
    );
  };
  versus(names.aiSdk, PEER_TARGETS.aiSdk);
  versus(names.openAI, PEER_TARGETS.openAIAgents);
}

async function memoryPerWaitingRun(): Promise<void> {
  const waiting: ModelProvider = {
    provider: 'bench',
    model: 'waiting',
    generate: (request) =>
      new Promise((_resolve, reject) => {
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      }),
  };
  const assistant = agent({ model: waiting, tools: [lookupTool] });
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  const before = process.memoryUsage().heapUsed;
  const controller = new AbortController();
  const runs = Array.from({ length: CONCURRENT_RUNS }, () =>
    assistant.run('wait for the model', { signal: controller.signal }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const during = process.memoryUsage().heapUsed;
  const perRunKb = (during - before) / CONCURRENT_RUNS / 1024;
  controller.abort();
  const results = await Promise.all(runs);
  const cancelled = results.filter((result) => result.status === 'cancelled').length;
  console.log(
    `memory per run with ${CONCURRENT_RUNS} runs waiting on their model: ${perRunKb.toFixed(1)} KB  (target <= 50 KB: ${
      perRunKb <= 50 ? 'PASS' : 'FAIL'
    }); all cancelled afterwards: ${cancelled === CONCURRENT_RUNS}`,
  );
}

printLoadAround();
console.log(
  'agent loop: CPU time, fair method (bench/src/fair.ts): no forced GC, equal-CPU blocks, rotating order',
);
// KEEL_BENCH_ONLY=peers runs the comparison with the peers alone.
const only = process.env.KEEL_BENCH_ONLY;
if (only === undefined || only === 'overhead') await overheadPerStep();
if (only === undefined || only === 'peers') await loopCostVersusPeers();
if (only === undefined || only === 'memory') await memoryPerWaitingRun();
