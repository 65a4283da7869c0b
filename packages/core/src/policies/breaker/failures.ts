import { classify } from '../../errors/classify.js';
import type { ErrorCategory, ErrorCode } from '../../errors/codes.js';
import { isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';

/**
 * Codes that say the caller erred, or that a local limit refused the call, not that the dependency is unhealthy:
 * a bad or oversized request, a response cut at the caller's token limit, content filtered by policy, an unknown
 * model or tool, invalid tool arguments, a call the user or a permission rule refused, output that failed the
 * caller's schema, and refusals by keel's own policies (another breaker, a bulkhead, a rate limiter, the budget).
 *
 * Deliberately absent: `provider.auth` and `provider.quota_exhausted`. They fail every call until someone acts, so
 * opening the breaker stops hammering the provider and lets fallbacks take over at once; probes notice the fix.
 */
export const CALLER_FAULT_CODES: readonly ErrorCode[] = Object.freeze([
  'provider.bad_request',
  'provider.not_found',
  'provider.context_overflow',
  'provider.max_tokens',
  'provider.content_filter',
  'tool.invalid_input',
  'tool.not_found',
  'tool.permission_denied',
  'tool.rejected',
  'output.invalid',
  'policy.circuit_open',
  'policy.bulkhead_full',
  'policy.rate_limited',
  'policy.budget_exhausted',
] as const);

/** Categories that never describe a dependency's health: input and output checks, configuration, the run itself. */
const CALLER_FAULT_CATEGORIES: ReadonlySet<ErrorCategory> = new Set(['guardrail', 'config', 'run']);
const CALLER_FAULTS: ReadonlySet<string> = new Set(CALLER_FAULT_CODES);

/**
 * The breaker's default failure rule: every error counts, except control signals, KeelErrors whose code is in
 * {@link CALLER_FAULT_CODES}, KeelErrors of the `guardrail`, `config` and `run` categories, and aborts (an
 * `AbortError`, or anything else `classify` calls `run.cancelled`): an abort says someone stopped waiting, not that
 * the dependency failed. Other errors that are not KeelErrors count: an unclassified fault is more likely the
 * dependency's than the caller's.
 *
 * @example
 *   circuitBreaker({ isFailure: (error) => isDependencyFailure(error) && !isMyExpectedError(error) });
 */
export function isDependencyFailure(error: unknown): boolean {
  if (isControlSignal(error)) return false;
  if (!KeelError.isInstance(error)) return classify(error).code !== 'run.cancelled';
  return !CALLER_FAULTS.has(error.code) && !CALLER_FAULT_CATEGORIES.has(error.category);
}
