// The cost of a budget reservation and its settlement (the two store operations keel runs around every model call
// under `budgets`), in this process's memory and in Redis on loopback. Cases take turns call by call (the order
// rotating), each call timed on its own, so that the noise of a shared machine falls on all alike; round trips are
// counted from Redis's MONITOR feed over a separate block of calls. No forced GC in the timed blocks; the load average
// is printed before and after.
// The pace governor's check around every model call under `pace` (admit before it, observe after it) is measured
// the same way: the process's governor (memoryPaceStore) and the fleet's (Redis paceStore), on a window the provider
// said is far from spent (the common case: the call goes at once, counted).
// Targets (issue 22): one Redis round trip per reserve, per settle, per admit and per observe, p50 under 0.5 ms each on
// loopback.
// Run: npm run bench:governance
import { loadavg } from 'node:os';
import type { RateLimitSnapshot } from '@keel/core/http';
import {
  type BudgetCounter,
  type BudgetStore,
  memoryBudgetStore,
  memoryPaceStore,
  type PaceStore,
} from '@keel/core/store';
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

/** The window of one provider/model/key, as OpenAI's headers put it: plenty left, so every check admits at once. */
const PACE_KEY = 'openai/gpt-4.1-mini/default';
const SNAPSHOT: RateLimitSnapshot = {
  requestsLimit: 1_000_000_000,
  requestsRemaining: 999_999_999,
  requestsResetInMs: 60_000,
  tokensRemaining: 1_000_000_000_000,
  tokensResetInMs: 60_000,
};

/** A store's admit and observe, each call a millisecond later on a clock of its own (the caller's, as keel passes). */
function paceCalls(store: PaceStore): { admit: () => Promise<number>; observe: () => Promise<void> } {
  let nowMs = 1_000_000;
  let call = 0;
  return {
    admit: async () => {
      nowMs++;
      const waitMs = await store.admit({
        key: PACE_KEY,
        callId: `bench:${call++}`,
        tokens: 1_300,
        nowMs,
        tenant: 'acme',
        priority: 0,
      });
      if (waitMs !== 0) throw new Error(`the bench's window should admit at once; told to wait ${waitMs} ms`);
      return waitMs;
    },
    observe: () => store.observe(PACE_KEY, SNAPSHOT, nowMs),
  };
}

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
    const localPace = paceCalls(memoryPaceStore());
    const fleetPace = paceCalls(shared.paceStore());
    await localPace.observe();
    await fleetPace.observe();
    const cases: Case[] = [
      { label: 'Redis PING (the round trip itself)', call: () => ping.ping() },
      { label: 'reserve, local (memory store)', call: () => local.reserve(COUNTERS) },
      { label: 'settle, local (memory store)', call: () => local.settle(ADJUSTMENTS) },
      { label: 'reserve, shared (Redis store)', call: () => fleet.reserve(COUNTERS) },
      { label: 'settle, shared (Redis store)', call: () => fleet.settle(ADJUSTMENTS) },
      { label: 'pace admit, local (memory store)', call: localPace.admit },
      { label: 'pace observe, local (memory store)', call: localPace.observe },
      { label: 'pace admit, shared (Redis store)', call: fleetPace.admit },
      { label: 'pace observe, shared (Redis store)', call: fleetPace.observe },
    ];
    await takeTurns(cases, WARMUP_CALLS);
    const reserveTrips = await roundTripsPerCall(redis.url, () => fleet.reserve(COUNTERS), COUNTED_CALLS);
    const settleTrips = await roundTripsPerCall(redis.url, () => fleet.settle(ADJUSTMENTS), COUNTED_CALLS);
    const admitTrips = await roundTripsPerCall(redis.url, fleetPace.admit, COUNTED_CALLS);
    const observeTrips = await roundTripsPerCall(redis.url, fleetPace.observe, COUNTED_CALLS);
    const times = await takeTurns(cases, CALLS);
    console.log(
      `budget store operations (${COUNTERS.length} counters per call) and the pace governor's check (admit before a call, observe after it): ${CALLS.toLocaleString('en-US')} calls per case taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up (ms per call)`,
    );
    const at = (index: number, fraction: number) => percentile(times[index]!, fraction);
    cases.forEach((entry, index) => {
      console.log(
        `  ${entry.label.padEnd(38)} p50 ${at(index, 0.5).toFixed(4)}  p90 ${at(index, 0.9).toFixed(4)}  p99 ${at(index, 0.99).toFixed(4)}`,
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
      verdict('shared pace admit', 7, admitTrips),
      verdict('shared pace observe', 8, observeTrips),
    ].filter(Boolean).length;
    console.log(
      `governor check (admit + observe), p50: local ${(at(5, 0.5) + at(6, 0.5)).toFixed(4)} ms, shared ${(at(7, 0.5) + at(8, 0.5)).toFixed(4)} ms`,
    );
    if (outages > 0) console.log(`${outages} outage(s) during the run: not every figure is a shared call`);
    console.log(`${passed} of 4 targets met`);
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
