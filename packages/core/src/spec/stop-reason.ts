/** How a run ended. */
export type TerminalStatus = 'completed' | 'failed' | 'interrupted' | 'cancelled';

/**
 * Why a run stopped. `completed` runs stop with `final_answer` or `stop_requested` (a tool's `stopRun`); failed runs
 * name the limit or fault (their `error.code` says more); `budget_exhausted` is a token or cost budget (`budgets`) that
 * could not reserve the next model call (`policy.budget_exhausted`, `data.budget` naming it). Interrupted runs stop with `approval_required` (a tool call
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
  | 'budget_exhausted'
  | 'no_progress'
  | 'guardrail'
  | 'output_invalid'
  | 'max_tokens'
  | 'model_error'
  | 'tool_error'
  | 'internal_error';
