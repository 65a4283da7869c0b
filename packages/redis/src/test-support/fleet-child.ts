// One process of a fleet, for the fleet tests: it calls a 127.0.0.1 server through a breaker or a rate limiter whose
// state is shared through Redis, as fast as it may, for `durationMs`, and prints what it did as one JSON line. Run
// from the built package (dist/), with its settings as JSON in argv[2]; it says `ready` once connected, and starts
// when stdin says go, so that every process of the fleet starts at once.
import { type BreakerTransition, circuitBreaker, consecutive, type Policy, rateLimiter } from '@keel/core';
import { redisState } from '../redis-state.js';

/** What the test tells each process. */
export interface FleetChildSettings {
  readonly redisUrl: string;
  readonly namespace: string;
  readonly serverUrl: string;
  readonly child: string;
  readonly durationMs: number;
  readonly policy:
    | { readonly kind: 'breaker'; readonly threshold: number; readonly halfOpenAfterMs: number }
    | { readonly kind: 'rate-limiter'; readonly ratePerSecond: number };
  /** Pause between calls, in milliseconds (0: the next call starts as soon as the last ended). */
  readonly pauseMs: number;
}

/**
 * Generous, so that a machine busy with the whole test suite never makes an operation time out: these tests are
 * about shared state, and a process that lost Redis would go its own way by design (the outage test covers that).
 */
const OPERATION_TIMEOUT_MS = 2_000;

/** What each process reports at the end. */
export interface FleetChildReport {
  readonly child: string;
  /** Every transition the process's breaker reported, its own and those published by the others. */
  readonly transitions: ReadonlyArray<Pick<BreakerTransition, 'from' | 'to' | 'reason' | 'atMs'>>;
  /** When each call it let through was sent (epoch ms). */
  readonly sentAtMs: readonly number[];
  /** Calls the policy refused. */
  readonly refused: number;
  /** When the process stopped calling (epoch ms). */
  readonly endedAtMs: number;
  /** Times Redis became unavailable to the process (0 expected). */
  readonly outages: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as FleetChildSettings;
const shared = redisState({
  url: settings.redisUrl,
  namespace: settings.namespace,
  operationTimeoutMs: OPERATION_TIMEOUT_MS,
});
let outages = 0;
shared.onUnavailable(() => outages++);
await shared.ready();
const transitions: Array<Pick<BreakerTransition, 'from' | 'to' | 'reason' | 'atMs'>> = [];
let policy: Policy;
if (settings.policy.kind === 'breaker') {
  const breaker = circuitBreaker({
    name: 'provider',
    strategy: consecutive({ threshold: settings.policy.threshold }),
    halfOpenAfterMs: settings.policy.halfOpenAfterMs,
    store: shared.breakerStore(),
  });
  breaker.onStateChange(({ from, to, reason, atMs }) => transitions.push({ from, to, reason, atMs }));
  policy = breaker;
} else {
  policy = rateLimiter({
    ratePerSecond: settings.policy.ratePerSecond,
    bucketSize: 1,
    mode: 'wait',
    maxWaitMs: 10_000,
    store: shared.rateLimiterStore({ name: 'provider' }),
  });
}
// Reads the shared state once before the start, as a long-running worker would have.
await policy.execute(() => undefined);
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.destroy();

const sentAtMs: number[] = [];
let refused = 0;
const endAtMs = Date.now() + settings.durationMs;
while (Date.now() < endAtMs) {
  try {
    await policy.execute(async () => {
      sentAtMs.push(Date.now());
      const response = await fetch(settings.serverUrl, { headers: { 'x-child': settings.child } });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`upstream answered ${response.status}`);
    });
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('policy.')) refused++;
  }
  if (settings.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, settings.pauseMs));
}
const report: FleetChildReport = {
  child: settings.child,
  transitions,
  sentAtMs,
  refused,
  endedAtMs: Date.now(),
  outages,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
await shared.close();
