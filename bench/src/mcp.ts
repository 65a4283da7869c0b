// The cost of one MCP tool call through keel over stdio, against the bare MCP SDK client in the same run. Each client
// calls `echo` on its own server-everything process (the reference server from npm). Three keel toolsets and three
// bare clients (six servers, so that which process runs where on a shared machine evens out) take turns call by
// call, the order rotating, and every call is timed on its own; the median call of each side is compared.
// Through keel a call is what the agent loop does with an MCP tool: validate the input against the listed schema,
// then execute it with a tool context (the toolset's breaker, cancellation wiring, result mapping, keel's transport).
// Run: npm run bench:mcp
import { createRequire } from 'node:module';
import type { Tool, ToolContext } from '@keel/core';
import { mcpTools } from '@keel/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { percentile } from './statistics.js';

/** Calls per client, after the warm-up. */
const CALLS = Number(process.env.KEEL_BENCH_MCP_CALLS ?? 4_000);
const WARMUP_CALLS = 1_000;
/** Servers per side. */
const PAIRS = 3;
/** keel may add the larger of these to a call. */
const TARGET_FRACTION = 0.05;
const TARGET_MICROSECONDS = 50;

const SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);
const INPUT = { message: 'benchmark' };

function context(signal: AbortSignal): ToolContext {
  return { signal, idempotencyKey: 'bench:1:0', runId: 'bench', step: 1, callIndex: 0, attempt: 1 };
}

/** Microseconds the call took. */
async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - started) / 1_000;
}

/**
 * Calls every client `calls` times, taking turns (the order rotates each turn), and returns the call durations of the
 * keel clients and of the bare ones, in microseconds, sorted.
 */
async function takeTurns(
  keelCalls: readonly (() => Promise<unknown>)[],
  bareCalls: readonly (() => Promise<unknown>)[],
  calls: number,
): Promise<[Float64Array, Float64Array]> {
  const clients = [
    ...keelCalls.map((call) => ({ call, keel: true })),
    ...bareCalls.map((call) => ({ call, keel: false })),
  ];
  const keelTimes = new Float64Array(calls * keelCalls.length);
  const bareTimes = new Float64Array(calls * bareCalls.length);
  let keelCount = 0;
  let bareCount = 0;
  for (let turn = 0; turn < calls; turn++) {
    for (let offset = 0; offset < clients.length; offset++) {
      const client = clients[(turn + offset) % clients.length]!;
      const microseconds = await timed(client.call);
      if (client.keel) keelTimes[keelCount++] = microseconds;
      else bareTimes[bareCount++] = microseconds;
    }
  }
  return [keelTimes.sort(), bareTimes.sort()];
}

function mean(values: Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

async function main(): Promise<void> {
  const toolsets = Array.from({ length: PAIRS }, () =>
    mcpTools({ command: process.execPath, args: [SERVER, 'stdio'] }),
  );
  const bareClients = Array.from({ length: PAIRS }, () => new Client({ name: 'bench', version: '1.0.0' }));
  try {
    const signal = new AbortController().signal;
    const keelCalls = await Promise.all(
      toolsets.map(async (toolset) => {
        const echo = (await toolset.connect()).find((tool) => tool.name === 'echo') as Tool | undefined;
        if (echo === undefined) throw new Error('server-everything lists no echo tool');
        return async () => {
          const checked = await echo.validate(INPUT);
          if (!checked.success) throw new Error('invalid benchmark input');
          const output = await echo.execute(checked.value, context(signal));
          if (output !== 'Echo: benchmark') throw new Error(`unexpected output ${String(output)}`);
        };
      }),
    );
    const bareCalls = await Promise.all(
      bareClients.map(async (client) => {
        await client.connect(
          new StdioClientTransport({ command: process.execPath, args: [SERVER, 'stdio'], stderr: 'ignore' }),
        );
        await client.listTools();
        return async () => {
          const result = await client.callTool({ name: 'echo', arguments: INPUT });
          if (result.isError === true) throw new Error('the bare call failed');
        };
      }),
    );

    await takeTurns(keelCalls, bareCalls, WARMUP_CALLS);
    const [keel, bare] = await takeTurns(keelCalls, bareCalls, CALLS);
    const at = (values: Float64Array, fraction: number) => percentile(Array.from(values), fraction);
    const keelMicroseconds = at(keel, 0.5);
    const bareMicroseconds = at(bare, 0.5);
    const added = keelMicroseconds - bareMicroseconds;
    const allowed = Math.max(bareMicroseconds * TARGET_FRACTION, TARGET_MICROSECONDS);
    const row = (label: string, values: Float64Array) =>
      `  ${label} median ${at(values, 0.5).toFixed(1)} µs, p25 ${at(values, 0.25).toFixed(1)} µs, p75 ${at(values, 0.75).toFixed(1)} µs, mean ${mean(values).toFixed(1)} µs`;

    console.log(
      `MCP tool call over stdio (server-everything echo): ${PAIRS} servers a side, ${CALLS.toLocaleString('en-US')} calls per server taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up`,
    );
    console.log(row('bare SDK client (Client.callTool):         ', bare));
    console.log(row('through keel (validate + execute the tool):', keel));
    console.log(
      `keel adds ${added.toFixed(1)} µs to the median call (${((added / bareMicroseconds) * 100).toFixed(1)}%)  ` +
        `(target <= max(5%, 50 µs) = ${allowed.toFixed(1)} µs: ${added <= allowed ? 'PASS' : 'FAIL'})`,
    );
  } finally {
    await Promise.all([
      ...toolsets.map((toolset) => toolset.close()),
      ...bareClients.map((client) => client.close()),
    ]);
  }
}

await main();
