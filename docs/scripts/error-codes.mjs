// What each error code means and what to do about it, for the documentation's page per code. The list of codes,
// their category and whether they are retried come from @keel/core's ERROR_CODES (codes.ts); a code missing here
// still gets its page (from codes.ts alone) and the docs build names it, to be described.
export const ERROR_CODE_DOCS = {
  'provider.rate_limited': [
    'The provider answered 429 (or its rate-limit error): too many requests or tokens for now.',
    "Nothing: keel waits for its Retry-After and retries within the run's budget, or falls back. If it persists, lower concurrency, add a fallback model, or raise your provider limits. A wait beyond `retry.maxRetryAfterMs` or the run's deadline is not waited for.",
  ],
  'provider.quota_exhausted': [
    'The account has no quota or credit left (OpenAI `insufficient_quota`, HTTP 402).',
    'Not retried: add credit or change the key. A fallback model on another account takes over.',
  ],
  'provider.overloaded': [
    'The provider is overloaded or unavailable (503, 529, `overloaded_error`).',
    'Retried with backoff, then the next fallback model. Add a fallback on another provider for outages.',
  ],
  'provider.server_error': [
    'The provider failed (500, 502 and other 5xx).',
    'Retried with backoff within the budget; a model whose breaker opens is skipped for a while.',
  ],
  'provider.auth': [
    'The provider refused the credentials (401, 403).',
    'Not retried: check the API key variable (`apiKeyEnv`) and its permissions.',
  ],
  'provider.bad_request': [
    'The provider refused the request as malformed (400, 422).',
    "Not retried: check the model name, options and tool schemas; the error's data holds the provider's message.",
  ],
  'provider.not_found': [
    'The model or endpoint does not exist (404).',
    'Not retried: check the model name and `baseUrl`.',
  ],
  'provider.conflict': [
    'A concurrent operation conflicted at the provider (409).',
    'Retried, as the official SDKs do.',
  ],
  'provider.context_overflow': [
    "The conversation is longer than the model's context window.",
    'keel reduces the conversation through the conversation manager and tries again, then falls back to a model with a larger window; set `summarizing` or a smaller `slidingWindow` for long runs.',
  ],
  'provider.max_tokens': [
    'The answer was cut at the output token limit (`finish_reason: length`).',
    "Raise `maxOutputTokens`, or set `onMaxTokens: 'continue'` to let the model go on.",
  ],
  'provider.invalid_response': [
    "The provider's response was not what its API promises: cut off, not JSON, missing fields.",
    'Retried; persistent ones point at a proxy or an incompatible server behind `baseUrl`.',
  ],
  'provider.content_filter': [
    'The provider withheld the answer under its content policy.',
    'Not retried: rephrase the task or use another model.',
  ],
  'provider.response_too_large': [
    "A response larger than the provider's `maxResponseBytes` cap.",
    'Not retried: raise the cap or ask for less output.',
  ],
  'provider.redirect_refused': [
    "The provider's endpoint redirected to another origin (or too often).",
    'Not retried and nothing is sent there: fix `baseUrl` to the final address.',
  ],
  'network.timeout': [
    'A connection or request timed out.',
    'Retried within the budget; raise `modelTimeoutMs` or `toolTimeoutMs` for slow dependencies.',
  ],
  'network.connection': [
    'The connection failed: refused, reset, DNS, TLS.',
    'Retried; check the host, the network and any proxy.',
  ],
  'tool.failed': [
    'A tool failed: a plain thrown `Error`, or a backend answer that says the call itself failed (500 for a non-idempotent tool, 404, anything unrecognised).',
    "The model sees it as data with guidance and may try otherwise; not retried unless the tool is idempotent and the failure retryable. A tool's `fallbacks` answer it.",
  ],
  'tool.timeout': [
    'A tool call ran past its `timeoutMs` (or the backend answered 504).',
    'Retried when the tool is idempotent; otherwise its outcome is unknown (`tool.outcome_unknown`).',
  ],
  'tool.invalid_input': [
    "The model's arguments did not match the tool's input schema (or the backend refused them: 400, 413, 422).",
    'The model is told what was wrong and corrects its call, within the correction limits.',
  ],
  'tool.not_found': [
    'The model called a tool the agent does not have.',
    'The model is told which tools exist and corrects itself.',
  ],
  'tool.permission_denied': [
    'A guardrail refused the call, or the backend answered 401/403.',
    "Not retried: the model is told; check the tool's credentials.",
  ],
  'tool.unavailable': [
    "The tool's backend is down or refusing work (503, 529, 429, 402), or the tool's breaker is open.",
    'Retried (nothing ran); a tool fallback answers when retries run out.',
  ],
  'tool.rejected': [
    'A person rejected the call when asked for approval.',
    'The model gets the reason and goes on without the call.',
  ],
  'tool.outcome_unknown': [
    'A call of a tool that is not idempotent timed out or lost its connection after it may have taken effect.',
    'Never repeated blindly: give the tool a `reconcile` lookup, or answer the decision (`keel resume --execute KEY` or `--abandon KEY`).',
  ],
  'policy.circuit_open': [
    'A circuit breaker is open: the dependency failed too often and is not called until a probe succeeds.',
    'The run falls back, or waits for the probe (`retry.waitForOpenBreakerMs`). Fix the dependency; the breaker closes on its own.',
  ],
  'policy.bulkhead_full': [
    'A bulkhead refused the call: too many at once and its queue is full.',
    "Retried later; raise the bulkhead's limits if the load is expected.",
  ],
  'policy.rate_limited': [
    "keel's own rate limiter refused the call.",
    "Retried when tokens are back; raise the limiter's rate if it is too strict.",
  ],
  'policy.timeout': [
    'A `timeout` policy abandoned the call.',
    'Retried by an outer retry when there is one; raise the timeout if the work is legitimately slow.',
  ],
  'policy.retries_exhausted': [
    'Every attempt of a retry policy failed.',
    'The cause holds the last failure; look at its code.',
  ],
  'policy.budget_exhausted': [
    'The retry budget is spent: too many retries in the run (or the process) already.',
    "The run fails rather than multiplying retries; a dependency is failing often, look at the report's errors by code.",
  ],
  'run.cancelled': [
    'The run was cancelled: its signal aborted, Ctrl-C, SIGTERM, `keel cancel`.',
    'Nothing: a cancelled run is final.',
  ],
  'run.timeout': [
    'The run went past `limits.timeoutMs`.',
    "Raise the limit, or look at the report's waiting time for what was slow.",
  ],
  'run.max_turns': [
    'The run took `limits.maxTurns` steps without a final answer.',
    'Raise the limit or make the instructions clearer; look at the conversation for a loop.',
  ],
  'run.token_budget': ['The run used up its token budget.', 'Raise the budget or shorten the work.'],
  'run.no_progress': [
    'The model repeated the same invalid call with nothing valid between: it is not getting closer.',
    "Improve the tool's description and schema, or use a stronger model.",
  ],
  'run.interrupted': [
    'The run stopped to wait: an approval, a decision about a call with an unknown outcome, a pause, or its process died.',
    'Resume it: `agent.resume(runId, { approvals, decisions })` or `keel resume <run-id>`.',
  ],
  'guardrail.input': [
    'An input guardrail refused the task.',
    "The model was never called; the error's message is the guardrail's.",
  ],
  'guardrail.output': [
    'An output guardrail withheld the final answer.',
    "Look at the guardrail's trigger in the report; adjust the instructions or the guardrail.",
  ],
  'output.invalid': [
    "The final answer did not match `outputSchema` after the model's corrections.",
    'Make the schema simpler, describe it in the instructions, or use a stronger model.',
  ],
  'store.unavailable': [
    'The run store could not be reached or written (a lock past its timeout, I/O, a closed store, PostgreSQL down).',
    'Retried; the run resumes from its last checkpoint once the store is back.',
  ],
  'store.conflict': [
    'The store refused a write that conflicts: a duplicate run id, a stale checkpoint, a lease another process holds, a busy session.',
    'Not retried: another process holds the run (`keel resume --wait` waits for its lease).',
  ],
  'store.not_found': [
    'The run (or the started tool call) does not exist in this store.',
    'Check the run id and the `--store` it was written to.',
  ],
  'store.invalid': [
    'The store refused the operation itself: a damaged file, a file that is not a keel store, a write to a read-only store.',
    'Not retried: move the file aside or restore it (`sqlite3 <file> .recover` may save its runs).',
  ],
  'config.invalid': [
    'An option, an agent file or an argument is wrong; the message says what to write, `data` says where (`{ where, option, path }`).',
    'Fix the named option. The CLI exits 2.',
  ],
  'internal.unexpected': [
    'A fault keel did not expect: a bug.',
    "Please report it with the run's report; the cause holds the original error.",
  ],
};
