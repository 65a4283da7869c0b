import { describe, expect, it } from 'vitest';
import { KeelError } from '../errors/keel-error.js';
import { FakeClock } from '../testing/fake-clock.js';
import { type RetryBudgetDeniedEvent, type RetryBudgetSnapshot, retryBudget } from './retry-budget.js';

function acquireAll(budget: { tryAcquireRetry(): boolean }, limit = 1_000): number {
  let granted = 0;
  while (granted < limit && budget.tryAcquireRetry()) granted++;
  return granted;
}

describe('retryBudget', () => {
  it('grants the per-second reserve with no traffic, then refuses', () => {
    const budget = retryBudget({ clock: new FakeClock() });
    // Defaults: minRetriesPerSecond 1 over a 10 s window.
    expect(acquireAll(budget)).toBe(10);
    expect(budget.snapshot()).toEqual({ spent: 10, remaining: 0, requestsInWindow: 0, retriesInWindow: 10 });
  });

  it('earns ratio × requests retries on top of the reserve', () => {
    const budget = retryBudget({ ratio: 0.1, minRetriesPerSecond: 0, clock: new FakeClock() });
    expect(budget.tryAcquireRetry()).toBe(false);
    for (let request = 0; request < 30; request++) budget.recordRequest();
    expect(budget.snapshot().remaining).toBe(3);
    // 0.1 × 30 is 3.0000000000000004 in floating point; exactly three are granted.
    expect(acquireAll(budget)).toBe(3);
  });

  it('lets earned retries and spent retries expire with the window', async () => {
    const clock = new FakeClock(0);
    const budget = retryBudget({ ratio: 0.5, minRetriesPerSecond: 0, windowMs: 1_000, clock });
    for (let request = 0; request < 4; request++) budget.recordRequest();
    expect(acquireAll(budget)).toBe(2);
    await clock.advance(500);
    expect(budget.tryAcquireRetry()).toBe(false);
    await clock.advance(600);
    // The requests (and the retries they paid for) are out of the window now: nothing is banked.
    expect(budget.snapshot()).toMatchObject({ requestsInWindow: 0, retriesInWindow: 0, remaining: 0 });
    budget.recordRequest();
    budget.recordRequest();
    expect(acquireAll(budget)).toBe(1);
  });

  it('caps retries over its whole life with maxRetries, however much traffic it sees', async () => {
    const clock = new FakeClock();
    const budget = retryBudget({ maxRetries: 3, ratio: 1, clock });
    for (let request = 0; request < 100; request++) budget.recordRequest();
    expect(acquireAll(budget)).toBe(3);
    await clock.advance(60_000);
    for (let request = 0; request < 100; request++) budget.recordRequest();
    expect(budget.tryAcquireRetry()).toBe(false);
    expect(budget.snapshot()).toMatchObject({ spent: 3, remaining: 0 });
  });

  it('is a plain count with ratio: false', () => {
    const budget = retryBudget({ maxRetries: 25, ratio: false });
    budget.recordRequest();
    expect(acquireAll(budget)).toBe(25);
    expect(budget.snapshot()).toEqual({ spent: 25, remaining: 0, requestsInWindow: 0, retriesInWindow: 0 });
  });

  it('takes back a released retry from the lifetime count and from the window', async () => {
    const clock = new FakeClock(0);
    const budget = retryBudget({ maxRetries: 2, ratio: 0.5, minRetriesPerSecond: 0, windowMs: 1_000, clock });
    for (let request = 0; request < 4; request++) budget.recordRequest();
    expect(budget.tryAcquireRetry()).toBe(true);
    await clock.advance(300);
    expect(budget.tryAcquireRetry()).toBe(true);
    expect(budget.snapshot()).toEqual({ spent: 2, remaining: 0, requestsInWindow: 4, retriesInWindow: 2 });
    budget.releaseRetry!();
    expect(budget.snapshot()).toEqual({ spent: 1, remaining: 1, requestsInWindow: 4, retriesInWindow: 1 });
    expect(budget.tryAcquireRetry()).toBe(true);
    budget.releaseRetry!();
    budget.releaseRetry!();
    budget.releaseRetry!();
    // Never below nothing spent.
    expect(budget.snapshot()).toMatchObject({ spent: 0, retriesInWindow: 0 });
  });

  it('restores spent retries from a snapshot', () => {
    const budget = retryBudget({ maxRetries: 5, ratio: false, initialSpent: 4 });
    expect(acquireAll(budget)).toBe(1);
  });

  it('reports grants and refusals with their reason, and only to listeners', () => {
    const budget = retryBudget({ maxRetries: 1, minRetriesPerSecond: 0, ratio: 1, clock: new FakeClock() });
    const granted: RetryBudgetSnapshot[] = [];
    const refused: RetryBudgetDeniedEvent[] = [];
    budget.onRetryAcquired((snapshot) => granted.push(snapshot));
    const subscription = budget.onRetryDenied((event) => refused.push(event));
    expect(budget.tryAcquireRetry()).toBe(false);
    budget.recordRequest();
    expect(budget.tryAcquireRetry()).toBe(true);
    budget.recordRequest();
    expect(budget.tryAcquireRetry()).toBe(false);
    subscription.dispose();
    expect(budget.tryAcquireRetry()).toBe(false);
    expect(granted).toEqual([{ spent: 1, remaining: 0, requestsInWindow: 1, retriesInWindow: 1 }]);
    expect(refused.map((event) => event.reason)).toEqual(['ratio', 'max_retries']);
  });

  it('rejects invalid options with config.invalid', () => {
    const cases: unknown[] = [
      { maxRetries: -1 },
      { maxRetries: 1.5 },
      { ratio: -0.1 },
      { ratio: Number.NaN },
      { minRetriesPerSecond: Number.POSITIVE_INFINITY },
      { windowMs: 0 },
      { initialSpent: -2 },
      { ratio: false },
      { maxRetry: 3 },
      null,
    ];
    for (const options of cases) {
      let caught: unknown;
      try {
        retryBudget(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.isInstance(caught) && caught.code === 'config.invalid', JSON.stringify(options)).toBe(
        true,
      );
    }
  });
});
