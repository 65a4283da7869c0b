// The cost of one MCP tool call through keel over stdio, against the bare MCP SDK client in the same run. Each calls
// `echo` on its own server-everything process (the reference server from npm). The two take turns call by call (which
// goes first alternates), and every call is timed on its own, so that the noise of a shared machine falls on both
// alike; the median call of each is compared.
// Through keel a call is what the agent loop does with an MCP tool: validate the input against the listed schema,
// then execute it with a tool context (the toolset's breaker, cancellation wiring, result mapping, keel's transport).
// Run: npm run bench:mcp
import { createRequire } from 'node:module';
import type { Tool, ToolContext } from '@keel/core';
import { mcpTools } from '@keel/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { percentile } from './statistics.js';

const CALLS = Number(process.env.KEEL_BENCH_MCP_CALLS ?? 10_000);
const WARMUP_CALLS = 2_000;
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

/** Runs both `calls` times, taking turns, and returns each one's call durations in microseconds, sorted. */
async function alternate(
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
  calls: number,
): Promise<[Float64Array, Float64Array]> {
  const firstTimes = new Float64Array(calls);
  const secondTimes = new Float64Array(calls);
  for (let index = 0; index < calls; index++) {
    if (index % 2 === 0) {
      firstTimes[index] = await timed(first);
      secondTimes[index] = await timed(second);
    } else {
      secondTimes[index] = await timed(second);
      firstTimes[index] = await timed(first);
    }
  }
  return [firstTimes.sort(), secondTimes.sort()];
}

function mean(values: Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

async function main(): Promise<void> {
  const toolset = mcpTools({ command: process.execPath, args: [SERVER, 'stdio'] });
  const bare = new Client({ name: 'bench', version: '1.0.0' });
  try {
    const echo = (await toolset.connect()).find((tool) => tool.name === 'echo') as Tool | undefined;
    if (echo === undefined) throw new Error('server-everything lists no echo tool');
    await bare.connect(
      new StdioClientTransport({ command: process.execPath, args: [SERVER, 'stdio'], stderr: 'ignore' }),
    );
    await bare.listTools();

    const signal = new AbortController().signal;
    const throughKeel = async () => {
      const checked = await echo.validate(INPUT);
      if (!checked.success) throw new Error('invalid benchmark input');
      const output = await echo.execute(checked.value, context(signal));
      if (output !== 'Echo: benchmark') throw new Error(`unexpected output ${String(output)}`);
    };
    const throughSdk = async () => {
      const result = await bare.callTool({ name: 'echo', arguments: INPUT });
      if (result.isError === true) throw new Error('the bare call failed');
    };

    await alternate(throughKeel, throughSdk, WARMUP_CALLS);
    const [keel, sdk] = await alternate(throughKeel, throughSdk, CALLS);
    const at = (values: Float64Array, fraction: number) => percentile(Array.from(values), fraction);
    const keelMicroseconds = at(keel, 0.5);
    const bareMicroseconds = at(sdk, 0.5);
    const added = keelMicroseconds - bareMicroseconds;
    const allowed = Math.max(bareMicroseconds * TARGET_FRACTION, TARGET_MICROSECONDS);
    const row = (label: string, values: Float64Array) =>
      `  ${label} median ${at(values, 0.5).toFixed(1)} µs, mean ${mean(values).toFixed(1)} µs, p99 ${at(values, 0.99).toFixed(0)} µs`;

    console.log(
      `MCP tool call over stdio (server-everything echo), ${CALLS.toLocaleString('en-US')} calls each, taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up:`,
    );
    console.log(row('bare SDK client (Client.callTool):         ', sdk));
    console.log(row('through keel (validate + execute the tool):', keel));
    console.log(
      `keel adds ${added.toFixed(1)} µs to the median call (${((added / bareMicroseconds) * 100).toFixed(1)}%)  ` +
        `(target <= max(5%, 50 µs) = ${allowed.toFixed(1)} µs: ${added <= allowed ? 'PASS' : 'FAIL'})`,
    );
  } finally {
    await Promise.all([toolset.close(), bare.close()]);
  }
}

await main();
