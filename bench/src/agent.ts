// keel's own overhead per agent step (an in-process model and tool that do almost nothing), its whole cost per step
// beside the Vercel AI SDK and the OpenAI Agents SDK on the same run, and the memory per run while 10,000 runs wait on
// their model. Run: npm run bench:agent
import { agent, type ModelProvider, type ModelRequest } from '@keel/core';
import {
  type AgentRunner,
  aiSdkRunner,
  keelRunner,
  openAIAgentsRunner,
  PEER_RUN_STEPS,
} from './agent-peers.js';
import { percentile } from './statistics.js';
import { lookupTool, stepModel } from './step-agent.js';

const STEPS_PER_RUN = 10;
const RUNS = Number(process.env.KEEL_BENCH_RUNS ?? 3_000);
const CONCURRENT_RUNS = 10_000;

/** The same work without keel: the model and tool called directly, for the baseline. */
async function bareRun(model: ModelProvider): Promise<void> {
  const messages: ModelRequest['messages'] = [{ role: 'user', content: 'go' }];
  const signal = new AbortController().signal;
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

async function overheadPerStep(): Promise<void> {
  const model = stepModel(STEPS_PER_RUN);
  const assistant = agent({ model, tools: [lookupTool], limits: { maxTurns: STEPS_PER_RUN + 2 } });
  const keelSamples: number[] = [];
  const bareSamples: number[] = [];
  for (let round = 0; round < 7; round++) {
    let start = process.hrtime.bigint();
    for (let index = 0; index < RUNS; index++) {
      const result = await assistant.run('go');
      if (result.status !== 'completed')
        throw new Error(`bench run ended ${result.status}: ${result.error?.message}`);
    }
    keelSamples.push(Number(process.hrtime.bigint() - start) / RUNS / STEPS_PER_RUN / 1_000);
    start = process.hrtime.bigint();
    for (let index = 0; index < RUNS; index++) await bareRun(model);
    bareSamples.push(Number(process.hrtime.bigint() - start) / RUNS / STEPS_PER_RUN / 1_000);
  }
  // The first two rounds warm the JIT.
  const keel = percentile(
    keelSamples.slice(2).sort((a, b) => a - b),
    0.5,
  );
  const bare = percentile(
    bareSamples.slice(2).sort((a, b) => a - b),
    0.5,
  );
  const overhead = keel - bare;
  console.log(`per step: keel ${keel.toFixed(2)} µs, model + tool alone ${bare.toFixed(2)} µs`);
  console.log(
    `keel overhead per step: ${overhead.toFixed(2)} µs  (target <= 20 µs: ${overhead <= 20 ? 'PASS' : 'FAIL'})`,
  );
}

/** How many times keel's whole cost per step must be below each peer's. */
const PEER_TARGETS = { aiSdk: 12, openAIAgents: 20 } as const;
const PEER_ROUNDS = Number(process.env.KEEL_BENCH_PEER_ROUNDS ?? 9);
const PEER_ROUND_MS = Number(process.env.KEEL_BENCH_PEER_ROUND_MS ?? 300);

/** CPU time per step of `runs` sequential runs, in microseconds, after a full collection (each pays its own garbage). */
async function cpuPerStep(runner: AgentRunner, runs: number): Promise<number> {
  collectGarbage();
  const start = process.cpuUsage();
  for (let index = 0; index < runs; index++) await runner();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / runs / PEER_RUN_STEPS;
}

/**
 * The whole cost per step (model and tool included: both do almost nothing) of keel, the AI SDK and the OpenAI
 * Agents SDK on the same 5-step run with a zod tool, in interleaved rounds; each round's run count is set so that it
 * lasts about PEER_ROUND_MS. Cost is the process's CPU time (user + system, GC threads included), not wall time: the
 * benchmark machine may be shared, and CPU time is what another process's load disturbs least. Each ratio is the
 * median over rounds of the peer's cost over keel's in the same round (neighbours in time share the machine's load),
 * after two warm-up rounds.
 */
async function loopCostVersusPeers(): Promise<void> {
  const subjects: { name: string; runner: AgentRunner; runs: number; samples: number[] }[] = [
    { name: 'keel', runner: keelRunner(), runs: 0, samples: [] },
    { name: 'Vercel AI SDK 6 (generateText)', runner: aiSdkRunner(), runs: 0, samples: [] },
    { name: 'OpenAI Agents SDK (run)', runner: openAIAgentsRunner(), runs: 0, samples: [] },
  ];
  for (const subject of subjects) {
    const perStepUs = await cpuPerStep(subject.runner, 200);
    subject.runs = Math.max(50, Math.round((PEER_ROUND_MS * 1_000) / (perStepUs * PEER_RUN_STEPS)));
  }
  for (let round = 0; round < PEER_ROUNDS; round++) {
    for (const subject of subjects) subject.samples.push(await cpuPerStep(subject.runner, subject.runs));
  }
  const median = (values: readonly number[]) =>
    percentile(
      values.slice(2).sort((a, b) => a - b),
      0.5,
    );
  const keel = subjects[0]!;
  console.log(
    `whole cost per step (CPU time), ${PEER_RUN_STEPS}-step run with a zod tool, ${PEER_ROUNDS - 2} interleaved rounds:`,
  );
  const line = (name: string, perStepUs: number) =>
    `  ${name.padEnd(32)} ${perStepUs.toFixed(2).padStart(8)} µs (median)`;
  console.log(line(keel.name, median(keel.samples)));
  const versus = (peer: (typeof subjects)[number], target: number) => {
    const ratio = median(peer.samples.map((sample, round) => sample / keel.samples[round]!));
    console.log(
      `${line(peer.name, median(peer.samples))}  ${ratio.toFixed(1)}x keel  (target >= ${target}x: ${
        ratio >= target ? 'PASS' : 'FAIL'
      })`,
    );
  };
  versus(subjects[1]!, PEER_TARGETS.aiSdk);
  versus(subjects[2]!, PEER_TARGETS.openAIAgents);
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
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

console.log(`agent loop: ${RUNS} runs of ${STEPS_PER_RUN} steps per round, 7 rounds (median of the last 5)`);
// KEEL_BENCH_ONLY=peers runs the comparison with the peers alone.
const only = process.env.KEEL_BENCH_ONLY;
if (only === undefined || only === 'overhead') await overheadPerStep();
if (only === undefined || only === 'peers') await loopCostVersusPeers();
if (only === undefined || only === 'memory') await memoryPerWaitingRun();
