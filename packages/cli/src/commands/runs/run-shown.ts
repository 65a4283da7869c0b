import type { JsonValue, PendingDecision, RunRecord, SerializedError } from '@keel/core';

/** What `keel runs show` tells of a run besides its record: read from its stored state, each part when known. */
export interface ShownRun {
  /** The run's task: its first user message. */
  task?: string;
  stopReason?: string;
  stopDetail?: string;
  /** The error it ended with (code, message, guidance), as stored (redacted). */
  error?: SerializedError;
  /** Its output, when it completed. */
  output?: JsonValue;
  /** The decisions it waits for (an interrupted run): empty otherwise. */
  pending: PendingDecision[];
  /** The tenant it spent for (the run option `tenant`). */
  tenant?: string;
  /** Its tokens, input and output. */
  usage?: { inputTokens: number; outputTokens: number };
  /** What its model calls cost (the report's `cost`). */
  cost?: { totalUsd: number; byModel: Record<string, number>; unpricedCalls: number };
}

/** Reads a stored run's task, stop reason, error, output and pending decisions; a part the state lacks is left out. */
export function shownRunOf(run: Pick<RunRecord, 'state'>): ShownRun {
  const state = (
    typeof run.state === 'object' && run.state !== null && !Array.isArray(run.state) ? run.state : {}
  ) as Record<string, JsonValue | undefined>;
  const shown: ShownRun = { pending: [] };
  const messages = Array.isArray(state.messages) ? state.messages : [];
  const first = messages.find(
    (message) =>
      typeof message === 'object' && message !== null && !Array.isArray(message) && message.role === 'user',
  ) as { content?: JsonValue } | undefined;
  if (first !== undefined)
    shown.task = typeof first.content === 'string' ? first.content : JSON.stringify(first.content);
  if (typeof state.stopReason === 'string') shown.stopReason = state.stopReason;
  if (typeof state.stopDetail === 'string') shown.stopDetail = state.stopDetail;
  if (typeof state.error === 'object' && state.error !== null && !Array.isArray(state.error))
    shown.error = state.error as unknown as SerializedError;
  if (state.output !== undefined) shown.output = state.output;
  if (Array.isArray(state.pendingDecisions))
    shown.pending = state.pendingDecisions as unknown as PendingDecision[];
  if (typeof state.tenant === 'string') shown.tenant = state.tenant;
  const report = objectOf(state.report);
  const usage = objectOf(report?.usage);
  if (typeof usage?.inputTokens === 'number' && typeof usage.outputTokens === 'number')
    shown.usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  const cost = objectOf(report?.cost);
  if (typeof cost?.totalUsd === 'number') {
    const byModel = objectOf(cost.byModel) ?? {};
    shown.cost = {
      totalUsd: cost.totalUsd,
      byModel: Object.fromEntries(
        Object.entries(byModel).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
      ),
      unpricedCalls: typeof cost.unpricedCalls === 'number' ? cost.unpricedCalls : 0,
    };
  }
  return shown;
}

function objectOf(value: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}
