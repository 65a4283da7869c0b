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
  /** The run that started it, for a child run (an agent tool's, a handoff's). */
  parentRunId?: string;
  /** The child runs it started, in order: empty when none. */
  children: ShownChild[];
}

/** A child run as `keel runs show` lists it. */
export interface ShownChild {
  runId: string;
  agentName: string;
  kind: string;
  toolName: string;
  /** As its parent last recorded it; `keel runs show` puts the child's own stored status over it. */
  status: string;
  stopReason?: string;
}

/** Reads a stored run's task, stop reason, error, output and pending decisions; a part the state lacks is left out. */
export function shownRunOf(run: Pick<RunRecord, 'state'>): ShownRun {
  const state = (
    typeof run.state === 'object' && run.state !== null && !Array.isArray(run.state) ? run.state : {}
  ) as Record<string, JsonValue | undefined>;
  const shown: ShownRun = { pending: [], children: [] };
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
  if (typeof state.parentRunId === 'string') shown.parentRunId = state.parentRunId;
  if (Array.isArray(state.children)) {
    for (const child of state.children) {
      if (
        typeof child !== 'object' ||
        child === null ||
        Array.isArray(child) ||
        typeof child.runId !== 'string'
      )
        continue;
      shown.children.push({
        runId: child.runId,
        agentName: String(child.agentName ?? ''),
        kind: String(child.kind ?? 'tool'),
        toolName: String(child.toolName ?? ''),
        status: String(child.status ?? 'running'),
        ...(typeof child.stopReason === 'string' ? { stopReason: child.stopReason } : {}),
      });
    }
  }
  return shown;
}

function objectOf(value: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}
