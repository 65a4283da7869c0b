import { KeelError } from '../../errors/keel-error.js';
import type { LedgerEntry } from '../../spec/run-store.js';
import type { ToolResult } from '../../spec/tool.js';
import type { AgentRuntime } from '../run/agent-runtime.js';
import type { ForwardedAnswers } from '../run/child-runs.js';
import {
  type ApprovalAnswer,
  abandonedResult,
  notRepeatedResult,
  type ToolCallDecision,
} from '../run/pending-decision.js';
import { countToolCall } from '../run/report.js';
import type { PendingToolCall, RunState } from '../run/run-state.js';
import { argumentsKeyOf, uncertainCallOf } from '../run/uncertain-call.js';
import { readLedgerResult } from './ledger-result.js';

/** What resume learned from the ledger. */
export interface Reconciled {
  /** Keys the ledger holds as started and not completed: their completion goes to the ledger too. */
  readonly startedKeys: Set<string>;
  /**
   * Calls that may have run and whose tool is not idempotent, and repeats of earlier calls whose outcome is unknown
   * that the run was interrupted on (these never ran): they need the user's decision.
   */
  readonly uncertain: Map<string, PendingToolCall>;
  /**
   * Keys the interrupted run waited for (any kind of pending decision) whose call the ledger has settled since: an
   * answer to one was applied by a process that died before its checkpoint, and is not applied again.
   */
  readonly settledKeys: Set<string>;
}

/**
 * Brings the current step's calls in line with the ledger. A call the ledger holds as completed is completed with the
 * ledger's result and stop directive (replayed, never executed again), even when the state's own checkpoint of it was
 * lost. A call the
 * state holds as pending is pending whatever the ledger says: a call is recorded as started before the state says so,
 * and runs only after, so a pending call never ran. A call the state holds as started may have run.
 */
export function reconcile(
  runtime: AgentRuntime,
  state: RunState,
  ledger: readonly LedgerEntry[],
): Reconciled {
  const entries = new Map(ledger.map((entry) => [entry.idempotencyKey, entry]));
  const startedKeys = new Set(
    ledger.filter((entry) => entry.status === 'started').map((entry) => entry.idempotencyKey),
  );
  const uncertain = new Map<string, PendingToolCall>();
  const settledKeys = new Set<string>();
  if (state.phase !== 'tools') return { startedKeys, uncertain, settledKeys };
  const waitedFor = new Set(state.pendingDecisions.map((decision) => decision.idempotencyKey));
  const repeats = new Set(
    state.pendingDecisions
      .filter((decision) => decision.kind === 'uncertain')
      .map((decision) => decision.idempotencyKey),
  );
  for (const call of state.pendingToolCalls) {
    if (call.status === 'pending' && repeats.has(call.idempotencyKey)) {
      uncertain.set(call.idempotencyKey, call);
      continue;
    }
    if (call.status === 'completed') continue;
    const entry = entries.get(call.idempotencyKey);
    if (entry?.status === 'completed' && entry.result !== undefined) {
      const { result, stop } = readLedgerResult(entry.result);
      call.status = 'completed';
      call.result = result;
      if (stop !== undefined) call.stop = stop;
      if (waitedFor.has(call.idempotencyKey)) settledKeys.add(call.idempotencyKey);
      // Its execution was counted in the checkpoint that was lost.
      countToolCall(
        state.report,
        call.call.name,
        result.status === 'error' ? (result.error.code ?? 'tool.failed') : undefined,
      );
      continue;
    }
    if (call.status !== 'started') continue;
    if (runtime.tools.get(call.call.name)?.tool.idempotent === true) continue;
    uncertain.set(call.idempotencyKey, call);
  }
  return { startedKeys, uncertain, settledKeys };
}

/** A call the user abandoned: its result, to be recorded in the ledger too. */
export interface Abandoned {
  readonly call: PendingToolCall;
  readonly result: ToolResult;
}

/**
 * Applies `resume`'s approvals and decisions to the state. Every key must name something pending: an approval the
 * interrupted run waits for, or a call that may have run (`config.invalid` otherwise, listing what is pending). A key
 * the run waited for whose call the ledger has settled since (see `Reconciled.settledKeys`) is an answer applied
 * already, by a process that died before its next checkpoint: it is skipped, so an answer sent again after a crash
 * at any point reaches the run. A key a child run waits for (a pending decision with `childRunId`) goes into
 * `forwarded`, for the child to be resumed with. Resolves with the calls abandoned.
 */
export function applyAnswers(
  state: RunState,
  reconciled: Reconciled,
  approvals: Readonly<Record<string, ApprovalAnswer>> | undefined,
  decisions: Readonly<Record<string, ToolCallDecision>> | undefined,
  forwarded: ForwardedAnswers = {},
): Abandoned[] {
  const childKeys = new Set(
    state.pendingDecisions
      .filter((decision) => decision.childRunId !== undefined)
      .map((decision) => decision.idempotencyKey),
  );
  const waitingApproval = new Map<string, PendingToolCall>();
  for (const decision of state.pendingDecisions) {
    if (decision.kind !== 'approval') continue;
    const call = state.pendingToolCalls.find((pending) => pending.idempotencyKey === decision.idempotencyKey);
    if (call !== undefined && call.status === 'pending') waitingApproval.set(decision.idempotencyKey, call);
  }
  for (const [key, answer] of Object.entries(approvals ?? {})) {
    if (childKeys.has(key)) {
      forwarded.approvals = { ...forwarded.approvals, [key]: answer };
      continue;
    }
    if (reconciled.settledKeys.has(key)) continue;
    const call = waitingApproval.get(key);
    if (call === undefined) notPending('approvals', key, state.runId, [...waitingApproval.keys()]);
    call.approval = answer.approved ? { approved: true } : rejection(answer.reason);
  }
  const abandoned: Abandoned[] = [];
  for (const [key, decision] of Object.entries(decisions ?? {})) {
    if (childKeys.has(key)) {
      forwarded.decisions = { ...forwarded.decisions, [key]: decision };
      continue;
    }
    if (reconciled.settledKeys.has(key)) continue;
    const call = reconciled.uncertain.get(key);
    if (call === undefined) notPending('decisions', key, state.runId, [...reconciled.uncertain.keys()]);
    if (decision === 'execute') {
      call.decision = 'execute';
      continue;
    }
    if (call.status === 'pending') {
      // A repeat the run was interrupted on: it never ran, and the earlier call stays unknown.
      const earlier = state.uncertainCalls?.find(
        (entry) =>
          entry.toolName === call.call.name && entry.argumentsKey === argumentsKeyOf(call.call.arguments),
      );
      call.status = 'completed';
      call.result = notRepeatedResult(call.call.name, earlier?.idempotencyKey, 'abandoned');
      continue;
    }
    const result = abandonedResult(call.call.name);
    call.status = 'completed';
    call.result = result;
    countToolCall(state.report, call.call.name, 'tool.failed');
    // Its outcome stays unknown: a repeat later in the run is reconciled or decided too.
    state.uncertainCalls = [
      ...(state.uncertainCalls ?? []),
      uncertainCallOf(call, state.step, 'run.interrupted'),
    ];
    abandoned.push({ call, result });
  }
  return abandoned;
}

function rejection(reason: string | undefined): ApprovalAnswer {
  return reason === undefined ? { approved: false } : { approved: false, reason };
}

function notPending(option: string, key: string, runId: string, pending: string[]): never {
  const known = pending.length === 0 ? 'nothing of that kind is pending' : `pending: ${pending.join(', ')}`;
  throw new KeelError(
    'config.invalid',
    `resume: ${option} names "${key}", which run ${runId} does not wait for (${known})`,
    {
      data: { where: 'resume', option, idempotencyKey: key },
    },
  );
}

/** Checks the shape of `approvals` and `decisions` (`config.invalid` says what to fix). */
export function checkAnswers(approvals: unknown, decisions: unknown): void {
  if (approvals !== undefined) {
    if (typeof approvals !== 'object' || approvals === null || Array.isArray(approvals)) {
      badAnswer(
        'approvals must be an object: { [idempotencyKey]: { approved: true } | { approved: false, reason } }',
      );
    }
    for (const [key, answer] of Object.entries(approvals)) {
      const candidate = answer as { approved?: unknown; reason?: unknown } | null;
      if (typeof candidate !== 'object' || candidate === null || typeof candidate.approved !== 'boolean') {
        badAnswer(`approvals["${key}"] must be { approved: true } or { approved: false, reason }`);
      }
      if (
        candidate.reason !== undefined &&
        (typeof candidate.reason !== 'string' || candidate.reason.length > 2_000)
      ) {
        badAnswer(`approvals["${key}"].reason must be a string of at most 2000 characters`);
      }
    }
  }
  if (decisions !== undefined) {
    if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) {
      badAnswer("decisions must be an object: { [idempotencyKey]: 'execute' | 'abandon' }");
    }
    for (const [key, decision] of Object.entries(decisions)) {
      if (decision !== 'execute' && decision !== 'abandon') {
        badAnswer(`decisions["${key}"] must be 'execute' or 'abandon', not ${JSON.stringify(decision)}`);
      }
    }
  }
}

function badAnswer(message: string): never {
  throw new KeelError('config.invalid', `resume: ${message}`, { data: { where: 'resume' } });
}
