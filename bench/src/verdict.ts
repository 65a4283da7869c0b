// The targets keel's policies are held to, checked against the figures of the run that just happened.
import type { Measurement } from './harness.js';
import type { HeapSeries } from './heap.js';

/** One target's outcome. */
export interface TargetResult {
  readonly target: string;
  readonly pass: boolean;
  /** The figures the outcome rests on. */
  readonly figures: string;
}

/** Most a single policy (retry, breaker, bulkhead, rate limiter) may add to a bare call, in nanoseconds. */
export const POLICY_OVERHEAD_LIMIT_NS = 300;
/** Most a timeout may add to a call whose function ignores its signal. */
export const TIMEOUT_OVERHEAD_LIMIT_NS = 1_000;
/** Most one call through the composed pipeline may take. */
export const COMPOSED_LIMIT_NS = 2_000;
/** How many times faster than cockatiel's wrap(retry, circuitBreaker, timeout) the composed pipeline must be. */
export const COMPOSED_SPEEDUP = 10;
/** Largest heap growth, after a full collection, that still counts as flat over the heap series. */
export const FLAT_HEAP_LIMIT_BYTES = 1024 * 1024;

const ns = (value: number): string => `${value.toFixed(0)} ns`;

export function checkTargets(
  measurements: ReadonlyMap<string, Measurement>,
  heap: readonly HeapSeries[],
): TargetResult[] {
  const medianOf = (id: string): number => {
    const measurement = measurements.get(id);
    if (measurement === undefined) throw new Error(`no measurement for ${id}`);
    return measurement.medianNs;
  };
  const bareNs = medianOf('bare');
  const results: TargetResult[] = [];

  const overhead = (id: string, name: string, limitNs: number): void => {
    const addedNs = medianOf(id) - bareNs;
    results.push({
      target: `${name} adds at most ${ns(limitNs)}`,
      pass: addedNs <= limitNs,
      figures: `adds ${ns(addedNs)} (${ns(medianOf(id))} per call vs bare ${ns(bareNs)})`,
    });
  };
  overhead('keel.retry', 'retry', POLICY_OVERHEAD_LIMIT_NS);
  overhead('keel.breaker', 'circuit breaker', POLICY_OVERHEAD_LIMIT_NS);
  overhead('keel.bulkhead', 'bulkhead', POLICY_OVERHEAD_LIMIT_NS);
  overhead('keel.rateLimiter', 'rate limiter', POLICY_OVERHEAD_LIMIT_NS);
  overhead('keel.timeout.cooperative', 'timeout (cooperative)', TIMEOUT_OVERHEAD_LIMIT_NS);
  overhead('keel.timeout.forced', 'timeout (forced)', TIMEOUT_OVERHEAD_LIMIT_NS);

  const composedNs = medianOf('keel.composed');
  results.push({
    target: `compose(retry, breaker, timeout, bulkhead) takes at most ${ns(COMPOSED_LIMIT_NS)} per call`,
    pass: composedNs <= COMPOSED_LIMIT_NS,
    figures: `${ns(composedNs)} per call (adds ${ns(composedNs - bareNs)} to the bare call)`,
  });
  const composedReadsNs = medianOf('keel.composed.reads');
  results.push({
    target: `the same with a function that reads its signal (and a caller signal) takes at most ${ns(COMPOSED_LIMIT_NS)} per call`,
    pass: composedReadsNs <= COMPOSED_LIMIT_NS,
    figures: `${ns(composedReadsNs)} per call (adds ${ns(composedReadsNs - bareNs)} to the bare call)`,
  });
  const wrapNs = medianOf('cockatiel.wrap');
  results.push({
    target: `the composed pipeline is at least ${COMPOSED_SPEEDUP}x faster than cockatiel wrap(retry, circuitBreaker, timeout)`,
    pass: wrapNs / composedNs >= COMPOSED_SPEEDUP,
    figures:
      `${(wrapNs / composedNs).toFixed(1)}x (${ns(wrapNs)} vs ${ns(composedNs)} per call; ` +
      `added cost ${((wrapNs - bareNs) / (composedNs - bareNs)).toFixed(1)}x)`,
  });

  const versus = (keelId: string, opossumId: string, name: string): void => {
    const keelNs = medianOf(keelId);
    const opossumNs = medianOf(opossumId);
    results.push({
      target: `keel's breaker is no slower than opossum's (${name})`,
      pass: keelNs <= opossumNs,
      figures: `${ns(keelNs)} vs ${ns(opossumNs)} per call (${(opossumNs / keelNs).toFixed(1)}x)`,
    });
  };
  versus('keel.breaker', 'opossum.noTimeout', 'closed, success path');
  versus('keel.breaker.open', 'opossum.open', 'open, reject path');

  for (const series of heap) {
    const perCall = series.growthBytes / series.calls;
    results.push({
      target: `heap flat after ${series.calls.toLocaleString('en-US')} calls: ${series.label}`,
      pass: series.growthBytes <= FLAT_HEAP_LIMIT_BYTES,
      figures: `grew ${formatBytes(series.growthBytes)} (${perCall.toFixed(3)} bytes per call; limit ${formatBytes(FLAT_HEAP_LIMIT_BYTES)})`,
    });
  }
  return results;
}

/**
 * Figures outside the targets that a reader of the verdict should see next to them: the targets are stated for a
 * function that ignores its signal, and real calls read it.
 */
export function observations(measurements: ReadonlyMap<string, Measurement>): string[] {
  const medianOf = (id: string): number => measurements.get(id)?.medianNs ?? Number.NaN;
  const lines: string[] = [];
  const compare = (keelId: string, peerId: string, what: string, peer: string): void => {
    const keelNs = medianOf(keelId);
    const peerNs = medianOf(peerId);
    const speed =
      peerNs >= keelNs
        ? `keel ${(peerNs / keelNs).toFixed(1)}x faster`
        : `keel ${(keelNs / peerNs).toFixed(1)}x slower`;
    lines.push(`${what}: ${ns(keelNs)} per call; ${peer}: ${ns(peerNs)} (${speed})`);
  };
  compare(
    'keel.composed.reads',
    'cockatiel.wrap.reads',
    'composed, function reads its signal',
    'cockatiel wrap',
  );
  compare(
    'keel.timeout.cooperative.reads',
    'cockatiel.timeout.cooperative.reads',
    'timeout, function reads its signal',
    'cockatiel timeout',
  );
  compare('keel.breaker.open', 'cockatiel.breaker.open', 'open breaker', 'cockatiel');
  return lines;
}

export function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? '-' : '';
  const size = Math.abs(bytes);
  if (size < 1024) return `${sign}${size} B`;
  if (size < 1024 * 1024) return `${sign}${(size / 1024).toFixed(1)} KiB`;
  return `${sign}${(size / 1024 / 1024).toFixed(2)} MiB`;
}
