// keel's peers, configured as their documentation suggests and as close to keel's settings as they allow.
import {
  bulkhead,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleAll,
  retry,
  TimeoutStrategy,
  timeout,
  wrap,
} from 'cockatiel';
import CircuitBreaker from 'opossum';
import pRetry from 'p-retry';
import type { BenchCase } from './harness.js';
import { SECTIONS } from './keel-cases.js';
import { bare, listensToSignal, readsSignal } from './subjects.js';

const PEERS = 'peers, alone (the function ignores its signal)';

/** cockatiel's retry with the settings the targets name. */
function cockatielRetry() {
  return retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
}

function cockatielBreaker() {
  return circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
}

/** The composition the composed-pipeline target is compared with. */
function cockatielWrap() {
  return wrap(cockatielRetry(), cockatielBreaker(), timeout(1_000, TimeoutStrategy.Cooperative));
}

/** Opossum breakers hold interval timers (unref'd); `shutdown` them when the benchmark ends. */
export interface PeerCases {
  readonly cases: BenchCase[];
  readonly opossumBreakers: readonly CircuitBreaker[];
}

export function peerCases(): PeerCases {
  const retryPolicy = cockatielRetry();
  const breaker = cockatielBreaker();
  const cooperative = timeout(1_000, TimeoutStrategy.Cooperative);
  const aggressive = timeout(1_000, TimeoutStrategy.Aggressive);
  const limit = bulkhead(10);
  const wrapped = cockatielWrap();
  const callerSignal = new AbortController().signal;
  const opossum = new CircuitBreaker(bare, {
    timeout: false,
    errorThresholdPercentage: 50,
    resetTimeout: 10_000,
  });
  // Opossum's default arms a 10 s timeout timer on every call; users who keep the default pay for it.
  const opossumDefault = new CircuitBreaker(bare, { errorThresholdPercentage: 50, resetTimeout: 10_000 });

  const cases: BenchCase[] = [
    { id: 'cockatiel.retry', label: 'cockatiel retry', section: PEERS, run: () => retryPolicy.execute(bare) },
    {
      id: 'cockatiel.breaker',
      label: 'cockatiel circuitBreaker',
      section: PEERS,
      run: () => breaker.execute(bare),
    },
    {
      id: 'cockatiel.timeout.cooperative',
      label: 'cockatiel timeout (Cooperative)',
      section: PEERS,
      run: () => cooperative.execute(bare),
    },
    {
      id: 'cockatiel.timeout.aggressive',
      label: 'cockatiel timeout (Aggressive)',
      section: PEERS,
      run: () => aggressive.execute(bare),
    },
    { id: 'cockatiel.bulkhead', label: 'cockatiel bulkhead', section: PEERS, run: () => limit.execute(bare) },
    {
      id: 'cockatiel.wrap',
      label: 'cockatiel wrap(retry, circuitBreaker, timeout)',
      section: PEERS,
      run: () => wrapped.execute(bare),
    },
    {
      id: 'opossum.noTimeout',
      label: 'opossum fire (timeout: false)',
      section: PEERS,
      run: () => opossum.fire(),
    },
    {
      id: 'opossum.defaultTimeout',
      label: 'opossum fire (default 10 s timeout)',
      section: PEERS,
      run: () => opossumDefault.fire(),
    },
    { id: 'p-retry', label: 'p-retry (retries: 2)', section: PEERS, run: () => pRetry(bare, { retries: 2 }) },
    {
      id: 'cockatiel.timeout.cooperative.reads',
      label: 'cockatiel timeout (Cooperative)',
      section: SECTIONS.READS,
      run: () => cooperative.execute(readsSignal),
    },
    {
      id: 'cockatiel.wrap.reads',
      label: 'cockatiel wrap(retry, circuitBreaker, timeout)',
      section: SECTIONS.READS,
      run: () => wrapped.execute(readsSignal, callerSignal),
    },
    {
      id: 'cockatiel.wrap.listens',
      label: 'the same, function subscribes to the signal',
      section: SECTIONS.READS,
      run: () => wrapped.execute(listensToSignal, callerSignal),
    },
  ];
  return { cases, opossumBreakers: [opossum, opossumDefault] };
}
