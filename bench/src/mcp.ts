// The cost of one MCP tool call through keel over stdio, against the bare MCP SDK client in the same run. Each client
// calls `echo` on its own server-everything process (the reference server from npm): bare SDK clients, keel toolsets
// as configured by default, and keel toolsets with `processGroup: false` (which shows what running each server in a
// session of its own costs on a loaded machine, apart from keel's call path). Every client takes its turn call by
// call, the order rotating, and every call is timed on its own, so that the noise of a shared machine falls on all
// alike; the median call of each side is compared. Several servers a side even out where the processes run.
// Through keel a call is what the agent loop does with an MCP tool: validate the input against the listed schema,
// then execute it with a tool context (the toolset's breaker, cancellation wiring, result mapping, keel's transport).
// Run: npm run bench:mcp
import { createRequire } from 'node:module';
import type { Tool, ToolContext } from '@keel/core';
import { mcpTools } from '@keel/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { printLoadAround } from './fair.js';
import { percentile } from './statistics.js';

printLoadAround();

/** Calls per client, after the warm-up. */
const CALLS = Number(process.env.KEEL_BENCH_MCP_CALLS ?? 4_000);
const WARMUP_CALLS = 1_000;
/** Servers per side. */
const SERVERS_PER_SIDE = 2;
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

type Call = () => Promise<unknown>;

/**
 * Calls every client of every side `calls` times, taking turns (the order rotates each turn), and returns each side's
 * call durations in microseconds, sorted.
 */
async function takeTurns(sides: readonly (readonly Call[])[], calls: number): Promise<Float64Array[]> {
  const clients = sides.flatMap((side, sideIndex) => side.map((call) => ({ call, sideIndex })));
  const times = sides.map((side) => new Float64Array(calls * side.length));
  const counts = sides.map(() => 0);
  for (let turn = 0; turn < calls; turn++) {
    for (let offset = 0; offset < clients.length; offset++) {
      const { call, sideIndex } = clients[(turn + offset) % clients.length]!;
      times[sideIndex]![counts[sideIndex]!++] = await timed(call);
    }
  }
  return times.map((values) => values.sort());
}

function mean(values: Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

async function main(): Promise<void> {
  const toolsets = Array.from({ length: SERVERS_PER_SIDE * 2 }, (_, index) =>
    mcpTools({ command: process.execPath, args: [SERVER, 'stdio'], processGroup: index < SERVERS_PER_SIDE }),
  );
  const bareClients = Array.from(
    { length: SERVERS_PER_SIDE },
    () => new Client({ name: 'bench', version: '1.0.0' }),
  );
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
    const sides = [bareCalls, keelCalls.slice(0, SERVERS_PER_SIDE), keelCalls.slice(SERVERS_PER_SIDE)];

    await takeTurns(sides, WARMUP_CALLS);
    const [bare, keel, keelSharedGroup] = (await takeTurns(sides, CALLS)) as [
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    const at = (values: Float64Array, fraction: number) => percentile(Array.from(values), fraction);
    const bareMicroseconds = at(bare, 0.5);
    const added = at(keel, 0.5) - bareMicroseconds;
    const allowed = Math.max(bareMicroseconds * TARGET_FRACTION, TARGET_MICROSECONDS);
    const row = (label: string, values: Float64Array) =>
      `  ${label} median ${at(values, 0.5).toFixed(1)} µs, p25 ${at(values, 0.25).toFixed(1)} µs, p75 ${at(values, 0.75).toFixed(1)} µs, mean ${mean(values).toFixed(1)} µs`;

    console.log(
      `MCP tool call over stdio (server-everything echo): ${SERVERS_PER_SIDE} servers a side, ${CALLS.toLocaleString('en-US')} calls per server taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up`,
    );
    console.log(row('bare SDK client (Client.callTool):               ', bare));
    console.log(row('through keel (validate + execute the tool):      ', keel));
    console.log(row('through keel, processGroup: false (shared group):', keelSharedGroup));
    const sharedAdded = at(keelSharedGroup, 0.5) - bareMicroseconds;
    console.log(
      `of which keel's call path: ${sharedAdded.toFixed(1)} µs; the server's own session and process group: ${(added - sharedAdded).toFixed(1)} µs`,
    );
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
