import type { ErrorCode } from '../../errors/codes.js';
import { KeelError } from '../../errors/keel-error.js';
import { isDependencyFailure } from '../../policies/breaker/failures.js';

/*
 * The agent's failure rules: which failures move a run to the next model, which count against a model's breaker,
 * and which error a retry wrapper stands for. Adapters that drive models outside the agent (`@keel/ai-sdk`'s
 * middleware) import them from `@keel/core/adapter`, so both decide alike.
 */

/**
 * Failures that say the model is unavailable now, not that the request is wrong: after its retries the loop moves to
 * the next model of the chain. Never on `provider.auth`, `provider.quota_exhausted`, `provider.bad_request` and the
 * like: another model would not fix the account or the request, and switching would hide the fault.
 */
export const FALLBACK_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'provider.rate_limited',
  'provider.overloaded',
  'provider.server_error',
  'provider.invalid_response',
  'network.timeout',
  'network.connection',
  'policy.circuit_open',
  'policy.timeout',
]);

/**
 * The failure a retry policy gave up on, rather than its `policy.retries_exhausted` wrapper: the code that says what
 * went wrong (the report counts the attempts). A spent budget (`policy.budget_exhausted`) is kept: it is a reason of
 * its own, and its cause holds the last failure.
 */
export function presentableError(error: KeelError): KeelError {
  return error.code === 'policy.retries_exhausted' && KeelError.isInstance(error.cause) ? error.cause : error;
}

/** What is left once a retry policy's wrapper (`retries_exhausted`, `budget_exhausted`) is looked through. */
export function underlyingError(error: KeelError): KeelError {
  let current = error;
  while (
    (current.code === 'policy.retries_exhausted' || current.code === 'policy.budget_exhausted') &&
    KeelError.isInstance(current.cause)
  ) {
    current = current.cause;
  }
  return current;
}

/**
 * The agent's breakers count what {@link isDependencyFailure} counts, except `provider.auth` and
 * `provider.quota_exhausted`: an open breaker sends runs to the fallbacks, and the loop never falls back on those
 * (another model would hide a fault only the account's owner can fix).
 */
export function countsAgainstModel(error: unknown): boolean {
  if (
    KeelError.isInstance(error) &&
    (error.code === 'provider.auth' || error.code === 'provider.quota_exhausted')
  ) {
    return false;
  }
  return isDependencyFailure(error);
}
