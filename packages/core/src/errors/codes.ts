/**
 * The public error codes of keel. Codes are public API: add new ones, never rename or remove.
 * Each code names its category and whether a fault of that kind is worth retrying by default.
 */
export const ERROR_CODES = {
  'provider.rate_limited': { category: 'provider', retryable: true },
  'provider.quota_exhausted': { category: 'provider', retryable: false },
  'provider.overloaded': { category: 'provider', retryable: true },
  'provider.server_error': { category: 'provider', retryable: true },
  'provider.auth': { category: 'provider', retryable: false },
  'provider.bad_request': { category: 'provider', retryable: false },
  'provider.not_found': { category: 'provider', retryable: false },
  // HTTP 409: a concurrent operation conflicted (OpenAI: lock contention); both official SDKs retry it.
  'provider.conflict': { category: 'provider', retryable: true },
  'provider.context_overflow': { category: 'provider', retryable: false },
  'provider.max_tokens': { category: 'provider', retryable: false },
  'provider.invalid_response': { category: 'provider', retryable: true },
  'provider.content_filter': { category: 'provider', retryable: false },
  'network.timeout': { category: 'network', retryable: true },
  'network.connection': { category: 'network', retryable: true },
  'tool.failed': { category: 'tool', retryable: false },
  'tool.timeout': { category: 'tool', retryable: true },
  'tool.invalid_input': { category: 'tool', retryable: false },
  'tool.not_found': { category: 'tool', retryable: false },
  'tool.permission_denied': { category: 'tool', retryable: false },
  'tool.unavailable': { category: 'tool', retryable: true },
  'tool.rejected': { category: 'tool', retryable: false },
  // A call of a tool that is not idempotent timed out (or lost its connection) after it may have taken effect: calling
  // it again could repeat the effect, so it is not retryable (see `Tool.reconcile` and the agent's `uncertainCalls`).
  'tool.outcome_unknown': { category: 'tool', retryable: false },
  'policy.circuit_open': { category: 'policy', retryable: false },
  'policy.bulkhead_full': { category: 'policy', retryable: true },
  'policy.rate_limited': { category: 'policy', retryable: true },
  'policy.timeout': { category: 'policy', retryable: true },
  'policy.retries_exhausted': { category: 'policy', retryable: false },
  'policy.budget_exhausted': { category: 'policy', retryable: false },
  'run.cancelled': { category: 'run', retryable: false },
  'run.timeout': { category: 'run', retryable: false },
  'run.max_turns': { category: 'run', retryable: false },
  'run.token_budget': { category: 'run', retryable: false },
  'run.no_progress': { category: 'run', retryable: false },
  'run.interrupted': { category: 'run', retryable: false },
  'guardrail.input': { category: 'guardrail', retryable: false },
  'guardrail.output': { category: 'guardrail', retryable: false },
  'output.invalid': { category: 'output', retryable: false },
  'store.unavailable': { category: 'store', retryable: true },
  'store.conflict': { category: 'store', retryable: false },
  'store.not_found': { category: 'store', retryable: false },
  'config.invalid': { category: 'config', retryable: false },
  'internal.unexpected': { category: 'internal', retryable: false },
  // The store refused the operation itself (a bad query, a value it cannot hold): trying again cannot help.
  'store.invalid': { category: 'store', retryable: false },
  // A successful response larger than the provider's `maxResponseBytes` cap: downloading it again would end the same
  // way, so it is not retried (raise the cap, or ask for less output).
  'provider.response_too_large': { category: 'provider', retryable: false },
  // The provider's endpoint redirected to another origin (or too often): keel does not send the key, the headers and
  // the conversation after a redirect it cannot vouch for, and the same request would be redirected again.
  'provider.redirect_refused': { category: 'provider', retryable: false },
} as const satisfies Record<string, { category: ErrorCategory; retryable: boolean }>;

/** Where a fault came from. */
export type ErrorCategory =
  | 'provider'
  | 'network'
  | 'tool'
  | 'policy'
  | 'run'
  | 'guardrail'
  | 'output'
  | 'store'
  | 'config'
  | 'internal';

/** A dotted, stable error code such as `provider.rate_limited`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `value` is one of keel's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
