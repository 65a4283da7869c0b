// keel's own overhead per agent step (an in-process model and tool that do almost nothing), and the memory per run
// while 10,000 runs wait on their model. Run: npm run bench:agent
import { agent, type ModelProvider, type ModelRequest } from '@keel/core';
import { lookupTool, stepModel } from './step-agent.js';
import { percentile } from './statistics.js';

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
await overheadPerStep();
await memoryPerWaitingRun();
