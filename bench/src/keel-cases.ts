// keel's policies, configured as a user would, each measured on its success path.
import {
  bulkhead,
  circuitBreaker,
  compose,
  consecutive,
  fallback,
  hedge,
  rateLimiter,
  retry,
  retryBudget,
  timeout,
} from '@keel/core';
import type { BenchCase } from './harness.js';
import { bare, listensToSignal, readsSignal, VALUE } from './subjects.js';

const ALONE = 'keel, each policy alone (the function ignores its signal)';
const COMPOSED = 'keel, composed';
const READS = 'the function reads its signal (as real calls do)';

/** The pipeline the targets are about: retry, then breaker, then timeout, then bulkhead, outermost first. */
export function composedPipeline() {
  return compose(
    retry({ maxAttempts: 3 }),
    circuitBreaker({ strategy: consecutive({ threshold: 5 }), halfOpenAfterMs: 10_000 }),
    timeout(1_000),
    bulkhead({ maxConcurrent: 10 }),
  );
}

export function keelCases(): BenchCase[] {
  const retryPolicy = retry({ maxAttempts: 3 });
  const breaker = circuitBreaker({ strategy: consecutive({ threshold: 5 }), halfOpenAfterMs: 10_000 });
  const cooperative = timeout(1_000);
  const forced = timeout(1_000, { strategy: 'forced' });
  const limit = bulkhead({ maxConcurrent: 10 });
  // A bucket that never runs dry at millions of calls per second: the success path, not the reject path.
  const limiter = rateLimiter({ ratePerSecond: 1e9, bucketSize: 1e9 });
  const withFallback = fallback([() => VALUE]);
  // Long enough never to fire: a call that ends before the delay is the common case being measured.
  const hedged = hedge({ delayMs: 60_000 });
  const budgeted = retry({ maxAttempts: 3, budget: retryBudget() });
  const threePolicies = compose(
    retry({ maxAttempts: 3 }),
    circuitBreaker({ strategy: consecutive({ threshold: 5 }), halfOpenAfterMs: 10_000 }),
    timeout(1_000),
  );
  const pipeline = composedPipeline();
  // A caller's signal that lives as long as the process, as a run's signal outlives its calls.
  const callerSignal = new AbortController().signal;

  return [
    { id: 'keel.retry', label: 'retry', section: ALONE, run: () => retryPolicy.execute(bare) },
    { id: 'keel.breaker', label: 'circuit breaker', section: ALONE, run: () => breaker.execute(bare) },
    {
      id: 'keel.timeout.cooperative',
      label: 'timeout (cooperative)',
      section: ALONE,
      run: () => cooperative.execute(bare),
    },
    { id: 'keel.timeout.forced', label: 'timeout (forced)', section: ALONE, run: () => forced.execute(bare) },
    { id: 'keel.bulkhead', label: 'bulkhead', section: ALONE, run: () => limit.execute(bare) },
    { id: 'keel.rateLimiter', label: 'rate limiter', section: ALONE, run: () => limiter.execute(bare) },
    { id: 'keel.fallback', label: 'fallback', section: ALONE, run: () => withFallback.execute(bare) },
    { id: 'keel.hedge', label: 'hedge (delay not reached)', section: ALONE, run: () => hedged.execute(bare) },
    {
      id: 'keel.retryBudget',
      label: 'retry with a retry budget',
      section: ALONE,
      run: () => budgeted.execute(bare),
    },
    {
      id: 'keel.composed3',
      label: 'compose(retry, breaker, timeout)',
      section: COMPOSED,
      run: () => threePolicies.execute(bare),
    },
    {
      id: 'keel.composed',
      label: 'compose(retry, breaker, timeout, bulkhead)',
      section: COMPOSED,
      run: () => pipeline.execute(bare),
    },
    {
      id: 'keel.composed.callerSignal',
      label: 'the same, with a caller signal',
      section: COMPOSED,
      run: () => pipeline.execute(bare, callerSignal),
    },
    {
      id: 'keel.timeout.cooperative.reads',
      label: 'keel timeout (cooperative)',
      section: READS,
      run: () => cooperative.execute(readsSignal),
    },
    {
      id: 'keel.timeout.forced.reads',
      label: 'keel timeout (forced)',
      section: READS,
      run: () => forced.execute(readsSignal),
    },
    {
      id: 'keel.composed.reads',
      label: 'keel compose(retry, breaker, timeout, bulkhead)',
      section: READS,
      run: () => pipeline.execute(readsSignal, callerSignal),
    },
    {
      id: 'keel.composed.listens',
      label: 'the same, function subscribes to the signal',
      section: READS,
      run: () => pipeline.execute(listensToSignal, callerSignal),
    },
  ];
}

export const SECTIONS = { ALONE, COMPOSED, READS } as const;
