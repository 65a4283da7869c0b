// The cost of a budget reservation and its settlement (the two store operations keel runs around every model call
// under `budgets`), in this process's memory and in Redis on loopback. Cases take turns call by call (the order
// rotating), each call timed on its own, so that the noise of a shared machine falls on all alike; round trips are
// counted from Redis's MONITOR feed over a separate block of calls. No forced GC in the timed blocks; the load average
// is printed before and after.
// Targets (issue 22): one Redis round trip per reserve and per settle, p50 under 0.5 ms each on loopback.
// Run: npm run bench:governance
import { loadavg } from 'node:os';
import { type BudgetCounter, type BudgetStore, memoryBudgetStore } from '@keel/core/store';
import { redisState } from '@keel/redis';
import { Redis } from 'ioredis';
import { type Case, roundTripsPerCall, takeTurns } from './call-turns.js';
import { startBenchRedis } from './redis-server.js';
import { percentile } from './statistics.js';

const CALLS = Number(process.env.KEEL_BENCH_GOVERNANCE_CALLS ?? 10_000);
const WARMUP_CALLS = 1_000;
const COUNTED_CALLS = 1_000;
const TARGET_P50_MS = 0.5;

/** The counters of one call under a per-run, a tenant and a global daily budget, tokens and cost (5 counters). */
const COUNTERS: readonly BudgetCounter[] = [
  { key: 'tenant:acme:20419:tokens', limit: Number.MAX_SAFE_INTEGER, amount: 1_300, ttlMs: 90_000_000 },
  { key: 'tenant:acme:20419:cost', limit: Number.MAX_SAFE_INTEGER, amount: 2_600, ttlMs: 90_000_000 },
  { key: 'global:*:20419:tokens', limit: Number.MAX_SAFE_INTEGER, amount: 1_300, ttlMs: 90_000_000 },
  { key: 'global:*:20419:cost', limit: Number.MAX_SAFE_INTEGER, amount: 2_600, ttlMs: 90_000_000 },
  { key: 'session:s-1:all:tokens', limit: Number.MAX_SAFE_INTEGER, amount: 1_300, ttlMs: 0 },
];
const ADJUSTMENTS = COUNTERS.map((counter) => ({ key: counter.key, delta: -1_000, ttlMs: counter.ttlMs }));

async function main(): Promise<void> {
  console.log(
    `load average before: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const redis = await startBenchRedis();
  const shared = redisState({ url: redis.url, namespace: 'bench', operationTimeoutMs: 5_000 });
  const ping = new Redis(redis.url);
  let outages = 0;
  shared.onUnavailable(() => outages++);
  try {
    await shared.ready();
    const local: BudgetStore = memoryBudgetStore();
    const fleet = shared.budgetStore();
    const cases: Case[] = [
      { label: 'Redis PING (the round trip itself)', call: () => ping.ping() },
      { label: 'reserve, local (memory store)', call: () => local.reserve(COUNTERS) },
      { label: 'settle, local (memory store)', call: () => local.settle(ADJUSTMENTS) },
      { label: 'reserve, shared (Redis store)', call: () => fleet.reserve(COUNTERS) },
      { label: 'settle, shared (Redis store)', call: () => fleet.settle(ADJUSTMENTS) },
    ];
    await takeTurns(cases, WARMUP_CALLS);
    const reserveTrips = await roundTripsPerCall(redis.url, () => fleet.reserve(COUNTERS), COUNTED_CALLS);
    const settleTrips = await roundTripsPerCall(redis.url, () => fleet.settle(ADJUSTMENTS), COUNTED_CALLS);
    const times = await takeTurns(cases, CALLS);
    console.log(
      `budget store operations, ${COUNTERS.length} counters per call: ${CALLS.toLocaleString('en-US')} calls per case taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up (ms per call)`,
    );
    const at = (index: number, fraction: number) => percentile(times[index]!, fraction);
    cases.forEach((entry, index) => {
      console.log(
        `  ${entry.label.padEnd(36)} p50 ${at(index, 0.5).toFixed(4)}  p90 ${at(index, 0.9).toFixed(4)}  p99 ${at(index, 0.99).toFixed(4)}`,
      );
    });
    const verdict = (name: string, index: number, trips: number): boolean => {
      const p50 = at(index, 0.5);
      const pass = trips <= 1 && p50 < TARGET_P50_MS;
      console.log(
        `${name}: ${trips.toFixed(3)} round trips (MONITOR, ${COUNTED_CALLS} calls), p50 ${p50.toFixed(3)} ms (PING ${at(0, 0.5).toFixed(3)} ms)  (target <= 1 round trip and p50 < ${TARGET_P50_MS} ms: ${pass ? 'PASS' : 'FAIL'})`,
      );
      return pass;
    };
    const passed = [
      verdict('shared reserve', 3, reserveTrips),
      verdict('shared settle', 4, settleTrips),
    ].filter(Boolean).length;
    if (outages > 0) console.log(`${outages} outage(s) during the run: not every figure is a shared call`);
    console.log(`${passed} of 2 targets met`);
    console.log(
      'governor check: not measured (the pace governor is local to a process: no shared store to measure yet)',
    );
  } finally {
    ping.disconnect();
    await shared.close();
    await redis.stop();
    console.log(
      `load average after: ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );
  }
}

await main();
