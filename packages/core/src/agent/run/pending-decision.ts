import { type JsonValue, KeelError } from '../../errors/keel-error.js';
import type { ToolCall } from '../../spec/model.js';
import type { ToolResult } from '../../spec/tool.js';
import { toolError } from './tool-result.js';

/** A human's answer to a tool call that needs approval. A rejection's `reason` is shown to the model. */
export type ApprovalAnswer = { approved: true } | { approved: false; reason?: string };

/**
 * What to do with a call that may or may not have run (its process died while it ran, and its tool is not
 * idempotent): `execute` runs it again (the user accepts that its effect may happen twice), `abandon` gives the model
 * a `tool.failed` error saying the outcome is unknown.
 */
export type ToolCallDecision = 'execute' | 'abandon';

/**
 * Something an `interrupted` run waits for, keyed by the call's idempotency key: a human's approval before a tool
 * runs (`approval`), or a decision about a call that may already have run (`uncertain`).
 */
export interface PendingDecision {
  readonly kind: 'approval' | 'uncertain';
  readonly idempotencyKey: string;
  readonly toolName: string;
  /** The call's arguments as the model sent them (parsed JSON, or the raw text when it is not JSON). */
  readonly arguments: JsonValue;
  readonly step: number;
  readonly callIndex: number;
  /**
   * For an `uncertain` decision about a call that has not run: the idempotency key of the earlier call with the same
   * arguments whose outcome is unknown (it timed out or lost its connection), which this call would repeat. Absent
   * for a call the process died in.
   */
  readonly repeatOf?: string;
  /**
   * Set when a child run (an agent tool's, a handoff's) waits for it and its parent surfaces it: the child's run id.
   * Answer it through the parent's `resume`, which passes it down. Absent for the run's own calls.
   */
  readonly childRunId?: string;
}

/** The pending decision about one call (a `PendingToolCall`) of step `step`. */
export function pendingDecisionOf(
  kind: PendingDecision['kind'],
  pending: { readonly call: ToolCall; readonly idempotencyKey: string; readonly callIndex: number },
  step: number,
  repeatOf?: string,
): PendingDecision {
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(pending.call.arguments) as JsonValue;
  } catch {
    parsed = pending.call.arguments;
  }
  return {
    kind,
    idempotencyKey: pending.idempotencyKey,
    toolName: pending.call.name,
    arguments: parsed,
    step,
    callIndex: pending.callIndex,
    ...(repeatOf === undefined ? {} : { repeatOf }),
  };
}

/** The `run.interrupted` error of a run that waits for decisions; `data.pending` lists their keys. */
export function interruptionError(runId: string, pending: readonly PendingDecision[]): KeelError {
  const approvals = pending.filter((decision) => decision.kind === 'approval');
  const uncertain = pending.filter(
    (decision) => decision.kind === 'uncertain' && decision.repeatOf === undefined,
  );
  const repeats = pending.filter(
    (decision) => decision.kind === 'uncertain' && decision.repeatOf !== undefined,
  );
  const parts: string[] = [];
  if (approvals.length > 0) {
    parts.push(
      `${approvals.map((decision) => `"${decision.toolName}"`).join(', ')} needs a human's approval`,
    );
  }
  if (uncertain.length > 0) {
    parts.push(
      `${uncertain.map((decision) => `"${decision.toolName}"`).join(', ')} may or may not have run before the process stopped`,
    );
  }
  if (repeats.length > 0) {
    parts.push(
      `${repeats.map((decision) => `"${decision.toolName}"`).join(', ')} would repeat an earlier call whose outcome is unknown (it may have taken effect)`,
    );
  }
  const first = pending[0];
  return new KeelError('run.interrupted', `Run ${runId} is waiting: ${parts.join('; ')}`, {
    data: {
      runId,
      pending: pending.map((decision) => ({ kind: decision.kind, idempotencyKey: decision.idempotencyKey })),
      ...(first === undefined
        ? {}
        : { toolName: first.toolName, idempotencyKey: first.idempotencyKey, callIndex: first.callIndex }),
    },
    guidance:
      uncertain.length + repeats.length > 0
        ? "Resume with decisions: { [idempotencyKey]: 'execute' | 'abandon' } (execute may repeat the call's effect)."
        : 'Resume with approvals: { [idempotencyKey]: { approved: true } | { approved: false, reason } }.',
  });
}

/** What the model sees for a call a human rejected: a `tool.rejected` error carrying the reason. */
export function rejectedResult(toolName: string, reason: string | undefined): ToolResult {
  const said = reason === undefined || reason === '' ? '' : `: ${reason}`;
  return toolError(
    new KeelError('tool.rejected', `A human rejected the call to "${toolName}"${said}`, {
      provider: toolName,
      data: { toolName, ...(reason === undefined ? {} : { reason }) },
      guidance: 'Do not make this call again; go on without it, or ask the user what to do instead.',
    }),
  );
}

/** What the model sees for an uncertain call the user chose to abandon. */
export function abandonedResult(toolName: string): ToolResult {
  return toolError(
    new KeelError('tool.failed', `The call to "${toolName}" was interrupted and its outcome is unknown`, {
      provider: toolName,
      data: { toolName, outcome: 'unknown' },
      guidance:
        'The call may or may not have taken effect. Check its effect another way before calling it again, or tell the user.',
    }),
  );
}

/**
 * What the model sees for a repeat of a call whose outcome is unknown that was not executed: refused by the agent's
 * `uncertainCalls: 'refuse'`, or abandoned by a person. `data.repeatOf` is the earlier call's idempotency key.
 */
export function notRepeatedResult(
  toolName: string,
  earlierKey: string | undefined,
  why: 'refused' | 'abandoned',
): ToolResult {
  const data: Record<string, JsonValue> = { toolName, outcome: 'unknown', [why]: true };
  if (earlierKey !== undefined) data.repeatOf = earlierKey;
  return toolError(
    new KeelError(
      'tool.outcome_unknown',
      `The call to "${toolName}" was not made again: an earlier call with the same arguments may have taken effect, and its outcome is unknown`,
      {
        provider: toolName,
        data,
        guidance:
          'Do not call it again with the same arguments. Tell the user the earlier call may have taken effect and ' +
          'that its outcome could not be checked.',
      },
    ),
  );
}
