// The cost of an agent tool: a parent run on SQLite that calls one tool and answers, where the tool is a plain tool
// or an agent tool whose child run (on the same store) answers at once. The difference per parent run is what one
// child run costs: its record, its lease, its checkpoints, its report folded into the parent's. Target: under 1 ms.
// Interleaved rounds in one process, the median of the rounds reported: wall time (the target) and this process's CPU
// time (steadier on a loaded machine), with the machine's load before and after. Store writes per child run: one
// transaction, its creation with its first checkpoint (here its end: its row, its messages, its journal), beside the
// parent's four (its creation, the call's start, its completion, the end).
// Run: npm run bench:agent-tool  (KEEL_BENCH_RUNS: parent runs per round, default 200)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, agentTool, type ModelProvider, type ModelResponse, type Tool, tool } from '@keel/core';
import { SqliteRunStore } from '@keel/store-sqlite';

const RUNS = Number(process.env.KEEL_BENCH_RUNS ?? 200);
const ROUNDS = 7;
const WARMUP_RUNS = 100;
const TARGET_MS = 1;
const usage = { inputTokens: 1, outputTokens: 1 };

/** Calls `work` once, then answers; a conversation without tools is answered at once. */
const model: ModelProvider = {
  provider: 'bench',
  model: 'instant',
  async generate(request): Promise<ModelResponse> {
    const last = request.messages.at(-1);
    if (request.tools === undefined || request.tools.length === 0 || last?.role === 'tool')
      return { content: 'done', toolCalls: [], finishReason: 'stop', usage, model: 'instant' };
    return {
      content: '',
      toolCalls: [{ id: 'call_1', name: 'work', arguments: '{"prompt":"go"}' }],
      finishReason: 'tool_calls',
      usage,
      model: 'instant',
    };
  },
};

const input = {
  type: 'object',
  properties: { prompt: { type: 'string' } },
  required: ['prompt'],
} as const;

function parentWith(store: SqliteRunStore, work: Tool): ReturnType<typeof agent> {
  return agent({ name: 'parent', model, tools: [work], store });
}

/** Wall and CPU milliseconds per parent run. */
async function timeRuns(
  parent: ReturnType<typeof agent>,
  runs: number,
): Promise<{ wallMs: number; cpuMs: number }> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let index = 0; index < runs; index++) {
    const result = await parent.run('go');
    if (result.status !== 'completed') throw new Error(`a bench run ended ${result.status}`);
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { wallMs: (performance.now() - start) / runs, cpuMs: (cpu.user + cpu.system) / 1_000 / runs };
}

function load(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-agent-tool-'));
  const store = new SqliteRunStore(join(directory, 'keel.db'));
  try {
    const plainParent = parentWith(
      store,
      tool({ name: 'work', description: 'works', input, idempotent: true, execute: () => 'done' }),
    );
    const child = agent({ name: 'child', model, store });
    const composedParent = parentWith(
      store,
      agentTool(child, { name: 'work', description: 'a child agent works' }),
    );
    await timeRuns(plainParent, WARMUP_RUNS);
    await timeRuns(composedParent, WARMUP_RUNS);
    console.log(`load average before: ${load()} (1, 5, 15 min)`);
    const plain: Array<{ wallMs: number; cpuMs: number }> = [];
    const composed: Array<{ wallMs: number; cpuMs: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so neither always runs on a warmer (or busier) machine.
      if (round % 2 === 0) {
        plain.push(await timeRuns(plainParent, RUNS));
        composed.push(await timeRuns(composedParent, RUNS));
      } else {
        composed.push(await timeRuns(composedParent, RUNS));
        plain.push(await timeRuns(plainParent, RUNS));
      }
    }
    const wall = (rows: typeof plain) => median(rows.map((row) => row.wallMs));
    const cpu = (rows: typeof plain) => median(rows.map((row) => row.cpuMs));
    const overheadMs = wall(composed) - wall(plain);
    const overheadCpuMs = median(composed.map((row, index) => row.cpuMs - plain[index]!.cpuMs));
    console.log(
      `agent tool vs plain tool, SQLite, ${ROUNDS} rounds of ${RUNS} parent runs (median of rounds; wall ms, CPU ms):\n` +
        `  parent run with a plain tool: ${wall(plain).toFixed(3)} ms (CPU ${cpu(plain).toFixed(3)})\n` +
        `  parent run with an agent tool (one child run): ${wall(composed).toFixed(3)} ms (CPU ${cpu(composed).toFixed(3)})\n` +
        `  overhead per child run: ${overheadMs.toFixed(3)} ms (CPU ${overheadCpuMs.toFixed(3)}) ` +
        `(target < ${TARGET_MS} ms): ${overheadMs < TARGET_MS ? 'met' : 'NOT met'}`,
    );
    console.log(`load average after: ${load()} (1, 5, 15 min)`);
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
