import type { RetryBudget, RetryBudgetSnapshot } from '../../policies/retry-budget.js';

/**
 * A run's budget joined to a shared one (the process's, say): a retry is granted only when both have one left, and
 * then taken from both; every request is recorded in both. Snapshots and events are the run's own.
 */
export function combineBudgets(run: RetryBudget, shared: RetryBudget | undefined): RetryBudget {
  if (shared === undefined) return run;
  return {
    recordRequest(): void {
      run.recordRequest();
      shared.recordRequest();
    },
    tryAcquireRetry(): boolean {
      // Asked of the run first without taking, so that a refusal by either takes from neither.
      if (run.snapshot().remaining <= 0) return run.tryAcquireRetry();
      if (!shared.tryAcquireRetry()) return false;
      return run.tryAcquireRetry();
    },
    releaseRetry(): void {
      run.releaseRetry?.();
      shared.releaseRetry?.();
    },
    snapshot: (): RetryBudgetSnapshot => run.snapshot(),
    onRetryAcquired: run.onRetryAcquired,
    onRetryDenied: run.onRetryDenied,
  };
}
