import type { ErrorCode } from '../../errors/codes.js';
import type { JsonValue } from '../../errors/keel-error.js';

/** How a run ended. */
export type TerminalStatus = 'completed' | 'failed' | 'interrupted' | 'cancelled';

/**
 * Why a run stopped. `completed` runs stop with `final_answer` or `stop_requested` (a tool's `stopRun`); failed runs
 * name the limit or fault (their `error.code` says more). Interrupted runs stop with `approval_required` (a tool call
 * awaits a human's approval), `decision_required` (a call may or may not have run: execute it again or abandon it?),
 * `store_unavailable` (the run store failed: the run paused), `lease_lost` (another process took the run over) or
 * `paused` (asked to pause, as a worker shutting down does: it stopped at its last checkpoint).
 */
export type StopReason =
  | 'final_answer'
  | 'stop_requested'
  | 'approval_required'
  | 'decision_required'
  | 'store_unavailable'
  | 'lease_lost'
  | 'paused'
  | 'cancelled'
  | 'max_turns'
  | 'timeout'
  | 'token_budget'
  | 'no_progress'
  | 'guardrail'
  | 'output_invalid'
  | 'max_tokens'
  | 'model_error'
  | 'tool_error'
  | 'internal_error';

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
