// The cost of an agent tool: a parent run on SQLite that calls one tool and answers, where the tool is a plain tool
// or an agent tool whose child run (on the same store) answers at once. The difference per parent run is what one
// child run costs: its record, its lease, its checkpoints, its report folded into the parent's. Target: under 1 ms.
// Interleaved rounds in one process, the median of the rounds reported.
// Run: npm run bench:agent-tool  (KEEL_BENCH_RUNS: parent runs per round, default 200)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

async function timeRuns(parent: ReturnType<typeof agent>, runs: number): Promise<number> {
  const start = performance.now();
  for (let index = 0; index < runs; index++) {
    const result = await parent.run('go');
    if (result.status !== 'completed') throw new Error(`a bench run ended ${result.status}`);
  }
  return (performance.now() - start) / runs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'keel-bench-agent-tool-'));
  const store = new SqliteRunStore(join(directory, 'keel.db'));
  try {
    const plain = parentWith(
      store,
      tool({ name: 'work', description: 'works', input, idempotent: true, execute: () => 'done' }),
    );
    const child = agent({ name: 'child', model, store });
    const composed = parentWith(
      store,
      agentTool(child, { name: 'work', description: 'a child agent works' }),
    );
    await timeRuns(plain, WARMUP_RUNS);
    await timeRuns(composed, WARMUP_RUNS);
    const plainMs: number[] = [];
    const composedMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      plainMs.push(await timeRuns(plain, RUNS));
      composedMs.push(await timeRuns(composed, RUNS));
    }
    const overheadMs = median(composedMs) - median(plainMs);
    console.log(
      `agent tool vs plain tool, SQLite, ${ROUNDS} rounds of ${RUNS} parent runs (median of rounds):\n` +
        `  parent run with a plain tool: ${median(plainMs).toFixed(3)} ms\n` +
        `  parent run with an agent tool (one child run): ${median(composedMs).toFixed(3)} ms\n` +
        `  overhead per child run: ${overheadMs.toFixed(3)} ms (target < ${TARGET_MS} ms): ${overheadMs < TARGET_MS ? 'met' : 'NOT met'}`,
    );
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
