import type { ErrorCode } from '../../errors/codes.js';
import type { JsonValue } from '../../errors/keel-error.js';

export type { StopReason, TerminalStatus } from '../../spec/stop-reason.js';

import type { StopReason } from '../../spec/stop-reason.js';

/**
 * How a failed or interrupted run's error maps to its stop reason. Given the error itself (not only its code), a
 * `run.interrupted` error tells `approval_required` from `decision_required` by what it waits for (`data.pending`:
 * any call that may have run makes it `decision_required`); given only the code, `run.interrupted` is
 * `approval_required`.
 */
export function stopReasonOf(
  error: ErrorCode | { readonly code: ErrorCode; readonly data?: Readonly<Record<string, JsonValue>> },
): StopReason {
  const code = typeof error === 'string' ? error : error.code;
  switch (code) {
    case 'run.cancelled':
      return 'cancelled';
    case 'run.max_turns':
      return 'max_turns';
    case 'run.timeout':
      return 'timeout';
    case 'run.token_budget':
      return 'token_budget';
    case 'policy.budget_exhausted':
      // A token or cost budget names itself; the retry budget's refusal is the model's fault it gave up on.
      return typeof error !== 'string' && typeof error.data?.budget === 'string'
        ? 'budget_exhausted'
        : 'model_error';
    case 'run.no_progress':
      return 'no_progress';
    case 'run.interrupted':
      return typeof error !== 'string' && waitsForDecision(error.data)
        ? 'decision_required'
        : 'approval_required';
    case 'store.unavailable':
      return 'store_unavailable';
    case 'store.conflict':
      return 'lease_lost';
    case 'guardrail.input':
    case 'guardrail.output':
      return 'guardrail';
    case 'output.invalid':
      return 'output_invalid';
    case 'provider.max_tokens':
      return 'max_tokens';
    case 'internal.unexpected':
    case 'config.invalid':
    case 'store.invalid':
    case 'store.not_found':
      return 'internal_error';
    default:
      return code.startsWith('tool.') ? 'tool_error' : 'model_error';
  }
}

/** Whether a `run.interrupted` error's pending decisions include a call that may have run (`kind: 'uncertain'`). */
function waitsForDecision(data: Readonly<Record<string, JsonValue>> | undefined): boolean {
  const pending = data?.pending;
  if (!Array.isArray(pending)) return false;
  return pending.some(
    (decision) =>
      typeof decision === 'object' &&
      decision !== null &&
      !Array.isArray(decision) &&
      decision.kind === 'uncertain',
  );
}
