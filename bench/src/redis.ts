// The cost of a shared breaker check and a shared rate-limit take (@keel/redis) against local ones, on a private
// Redis over loopback. Every case takes its turn call by call (the order rotating), each call timed on its own, so
// that the noise of a shared machine falls on all alike. Round trips per call are counted from Redis's MONITOR feed
// (what the server received from clients, script internals left out) over a separate block of calls.
// Targets (issue 11): at most one Redis round trip per shared check or take on the success path, and a median under
// 0.5 ms on loopback.
// Run: npm run bench:redis
import { circuitBreaker, type Policy, rateLimiter, retryBudget } from '@keel/core';
import { redisState } from '@keel/redis';
import { Redis } from 'ioredis';
import { type Case, roundTripsPerCall, takeTurns } from './call-turns.js';
import { printLoadAround } from './fair.js';
import { startBenchRedis } from './redis-server.js';
import { percentile } from './statistics.js';

printLoadAround();

const CALLS = Number(process.env.KEEL_BENCH_REDIS_CALLS ?? 20_000);
const WARMUP_CALLS = 2_000;
const COUNTED_CALLS = 1_000;
const TARGET_P50_MS = 0.5;
const TARGET_ROUND_TRIPS = 1;

async function main(): Promise<void> {
  const redis = await startBenchRedis();
  // A machine shared by several jobs can stall a process for a tenth of a second: a generous operation timeout keeps
  // every measured call a shared one (an outage would switch the policies to local state, and is reported below).
  const shared = redisState({ url: redis.url, namespace: 'bench', operationTimeoutMs: 5_000 });
  const ping = new Redis(redis.url);
  let outages = 0;
  shared.onUnavailable(({ error }) => {
    outages++;
    console.log(`Redis unavailable during the benchmark: ${error.message}`);
  });
  try {
    await shared.ready();
    const noop = () => undefined;
    const run = (policy: Policy) => () => policy.execute(noop);
    const sharedBreaker = circuitBreaker({ name: 'provider', store: shared.breakerStore() });
    const sharedLimiter = rateLimiter({
      ratePerSecond: 1e9,
      store: shared.rateLimiterStore({ name: 'provider' }),
    });
    const cases: Case[] = [
      { label: 'Redis PING (the round trip itself)', call: () => ping.ping() },
      { label: 'breaker check, local (in-memory store)', call: run(circuitBreaker({ name: 'provider' })) },
      { label: 'breaker check, shared (Redis store)', call: run(sharedBreaker) },
      { label: 'rate-limit take, local (in-memory bucket)', call: run(rateLimiter({ ratePerSecond: 1e9 })) },
      { label: 'rate-limit take, shared (Redis GCRA)', call: run(sharedLimiter) },
    ];
    await takeTurns(cases, WARMUP_CALLS);
    const breakerTrips = await roundTripsPerCall(redis.url, run(sharedBreaker), COUNTED_CALLS);
    const limiterTrips = await roundTripsPerCall(redis.url, run(sharedLimiter), COUNTED_CALLS);
    const budget = retryBudget({ ratio: 0.5, store: shared.retryBudgetStore({ name: 'provider' }) });
    const budgetTrips = await roundTripsPerCall(
      redis.url,
      async () => {
        budget.recordRequest();
        await ping.ping();
      },
      COUNTED_CALLS,
    );
    const times = await takeTurns(cases, CALLS);

    console.log(
      `@keel/redis on loopback: ${CALLS.toLocaleString('en-US')} calls per case taking turns, after ${WARMUP_CALLS.toLocaleString('en-US')} to warm up (ms per call)`,
    );
    const at = (index: number, fraction: number) => percentile(times[index]!, fraction);
    cases.forEach((entry, index) => {
      console.log(
        `  ${entry.label.padEnd(42)} p50 ${at(index, 0.5).toFixed(3)}  p90 ${at(index, 0.9).toFixed(3)}  p99 ${at(index, 0.99).toFixed(3)}`,
      );
    });
    console.log(
      `round trips per call (MONITOR, ${COUNTED_CALLS.toLocaleString('en-US')} calls): shared breaker check ${breakerTrips.toFixed(3)}, ` +
        `shared rate-limit take ${limiterTrips.toFixed(3)}, shared budget recordRequest ${budgetTrips.toFixed(3)} (sent without waiting)`,
    );
    const verdict = (name: string, index: number, localIndex: number, trips: number): boolean => {
      const p50 = at(index, 0.5);
      const pass = trips <= TARGET_ROUND_TRIPS && p50 < TARGET_P50_MS;
      console.log(
        `${name}: ${trips.toFixed(3)} round trips, p50 ${p50.toFixed(3)} ms (local ${at(localIndex, 0.5).toFixed(4)} ms, +${(p50 - at(localIndex, 0.5)).toFixed(3)} ms; PING ${at(0, 0.5).toFixed(3)} ms)  ` +
          `(target <= ${TARGET_ROUND_TRIPS} round trip and p50 < ${TARGET_P50_MS} ms: ${pass ? 'PASS' : 'FAIL'})`,
      );
      return pass;
    };
    const passed = [
      verdict('shared breaker check', 2, 1, breakerTrips),
      verdict('shared rate-limit take', 4, 3, limiterTrips),
    ].filter(Boolean).length;
    if (outages > 0)
      console.log(`${outages} outage(s) during the run: the figures above are not all shared calls`);
    console.log(`${passed} of 2 targets met`);
  } finally {
    ping.disconnect();
    await shared.close();
    await redis.stop();
  }
}

await main();
