import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.js';
import { type RetryBudgetDenial, type RetryBudgetDeniedEvent, retryBudget } from './retry-budget.js';
import type { RetryBudgetCounts, RetryBudgetStore, RetryBudgetStoreOptions } from './retry-budget-store.js';

/** A store that answers what the test tells it, and records what it is asked. */
function scriptedStore(answers: Array<'granted' | RetryBudgetDenial>, counts: RetryBudgetCounts) {
  const received: RetryBudgetStoreOptions[] = [];
  const calls: string[] = [];
  const factory = (options: RetryBudgetStoreOptions): RetryBudgetStore => {
    received.push(options);
    return {
      recordRequest: () => calls.push('request'),
      tryAcquireRetry: () => {
        calls.push('acquire');
        return answers.shift()!;
      },
      releaseRetry: () => calls.push('release'),
      counts: () => counts,
    };
  };
  return { factory, received, calls };
}

describe('retryBudget: store', () => {
  it('hands its store the validated limits, the spent retries and the clock', () => {
    const clock = new FakeClock();
    const store = scriptedStore([], { spent: 0, requestsInWindow: 0, retriesInWindow: 0 });
    retryBudget({
      ratio: 0.1,
      minRetriesPerSecond: 2,
      windowMs: 5_000,
      initialSpent: 3,
      store: store.factory,
      clock,
    });
    expect(store.received).toEqual([
      {
        limits: { maxRetries: Number.POSITIVE_INFINITY, ratio: 0.1, reserve: 10, windowMs: 5_000 },
        initialSpent: 3,
        clock,
      },
    ]);
  });

  it('passes requests, acquisitions and releases on, and reports refusals by their reason', () => {
    const store = scriptedStore(['granted', 'unavailable'], {
      spent: 4,
      requestsInWindow: 20,
      retriesInWindow: 4,
    });
    const budget = retryBudget({ ratio: 0.5, minRetriesPerSecond: 0, store: store.factory });
    const denials: RetryBudgetDeniedEvent[] = [];
    budget.onRetryDenied((event) => denials.push(event));
    budget.recordRequest();
    expect(budget.tryAcquireRetry()).toBe(true);
    expect(budget.tryAcquireRetry()).toBe(false);
    budget.releaseRetry?.();
    expect(store.calls).toEqual(['request', 'acquire', 'acquire', 'release']);
    // remaining: 0.5 × 20 requests - 4 retries = 6.
    const snapshot = { spent: 4, remaining: 6, requestsInWindow: 20, retriesInWindow: 4 };
    expect(denials).toEqual([{ reason: 'unavailable', snapshot }]);
    expect(budget.snapshot()).toEqual(snapshot);
  });

  it('rejects a store that is not a factory with config.invalid', () => {
    expect(() => retryBudget({ store: {} as never })).toThrow(
      /retryBudget: store must be a function \(options\) => RetryBudgetStore/,
    );
  });
});
