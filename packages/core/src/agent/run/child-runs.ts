import { CONTROL_SIGNAL } from '../../errors/control.js';
import { hasBrand } from '../../errors/safe-read.js';
import type { RetryBudget } from '../../policies/retry-budget.js';
import type { Message } from '../../spec/model.js';
import type { ApprovalAnswer, PendingDecision, ToolCallDecision } from './pending-decision.js';
import { increment, type RunReport } from './report.js';
import type { ChildRunEntry, RunState } from './run-state.js';
import type { TerminalStatus } from './stop-reason.js';

/**
 * The key under which a run's options (`run` and `resume`) carry the link to the parent run that started it (an agent
 * tool or a handoff). A symbol, so that it is no option a user spells: `agentTool` and `handoff` set it.
 */
export const PARENT_RUN: unique symbol = Symbol.for('keel.parent-run') as never;

/** What a child run draws from its parent: its id, its retry budget and its deadline. */
export interface ParentRun {
  /** The parent run's id: the child's state keeps it as `parentRunId`. */
  readonly runId: string;
  /** The idempotency key of the parent's tool call that starts the child: the child's state keeps it as `parentCallKey`. */
  readonly callKey: string;
  /** The parent's retry budget: every retry of the child is taken from it too. */
  readonly budget: RetryBudget;
  /** The parent's deadline (ms since the epoch): the child's own can be earlier, never later. */
  readonly deadlineAtMs: number;
  /** The parent's tenant: a child run without a tenant of its own spends and is paced as the parent's. */
  readonly tenant?: string;
  /** The parent's pace priority: a child run without one of its own waits for the window as its parent would. */
  readonly priority?: number;
}

/** What a tool call of a run hands an agent tool or a handoff (see `parentRunOf`). */
export interface ParentRunHandle extends ParentRun {
  /** The parent's conversation so far (a handoff passes it on). */
  readonly messages: readonly Message[];
  /** Answers the parent's `resume` was given for decisions its children wait for, those of this child's keys. */
  answersFor(childRunId: string): ForwardedAnswers;
  /**
   * Resolves once the parent's writes so far are saved, its call that starts the child among them (an idempotent
   * call's start otherwise waits for the call's end): a crash inside the child then resumes it from that call rather
   * than asking the parent's model again.
   */
  saved(): Promise<void>;
  /** Records a child run on the parent (once per run id). */
  childStarted(child: ChildRunStart): void;
  /** Records how a child run ended, and adds its report's figures to the parent's. */
  childEnded(childRunId: string, ending: ChildRunEnding): void;
  /** Reports that the parent hands the conversation over to agent `to` (the `handoff` run event). */
  handedOff(to: string): void;
}

/** Approvals and decisions for a child's pending calls, passed down by its parent's `resume`. */
export interface ForwardedAnswers {
  approvals?: Record<string, ApprovalAnswer>;
  decisions?: Record<string, ToolCallDecision>;
}

/** A child run as it starts. */
export type ChildRunStart = Omit<ChildRunEntry, 'status' | 'stopReason' | 'errorCode'>;

/** How a child run ended, as its parent records it. */
export interface ChildRunEnding {
  readonly status: TerminalStatus;
  readonly stopReason: string;
  readonly errorCode?: string;
  readonly report: RunReport;
}

const CHILD_INTERRUPTION = Symbol.for('keel.child-interruption');

/**
 * Thrown by an agent tool or handoff whose child run was interrupted waiting for decisions (approvals, calls that may
 * have run): the parent is interrupted too, waiting for the same decisions under the same keys. A control signal: no
 * retry, breaker or fallback takes it for a failure.
 */
export class ChildInterruption extends Error {
  readonly [CONTROL_SIGNAL] = true as const;
  readonly [CHILD_INTERRUPTION] = true as const;
  readonly kind = 'child-interruption' as const;

  constructor(
    readonly stopReason: 'approval_required' | 'decision_required',
    readonly pending: readonly PendingDecision[],
  ) {
    super('A child run waits for decisions');
    this.name = 'ChildInterruption';
  }
}

/** True when `value` is a {@link ChildInterruption}; never throws (a revoked proxy is not one). */
export function isChildInterruption(value: unknown): value is ChildInterruption {
  return hasBrand(value, CHILD_INTERRUPTION);
}

/** Records a child run in the parent's state (`children`), once per run id; a child seen again is running again. */
export function recordChildStarted(state: RunState, child: ChildRunStart): void {
  state.children ??= [];
  const known = state.children.find((entry) => entry.runId === child.runId);
  if (known !== undefined) {
    known.status = 'running';
    delete known.stopReason;
    delete known.errorCode;
    return;
  }
  state.children.push({ ...child, status: 'running' });
}

/**
 * Records how a child run ended, and adds its figures to the parent's report: requests, retries, fallbacks, tool
 * calls, errors and tokens (the parent's usage is the tree's), and the child in `report.children`. A child that is
 * interrupted adds nothing yet: its figures come with its end.
 */
export function recordChildEnded(state: RunState, childRunId: string, ending: ChildRunEnding): void {
  const entry = state.children?.find((child) => child.runId === childRunId);
  if (entry !== undefined) {
    entry.status = ending.status;
    entry.stopReason = ending.stopReason;
    if (ending.errorCode === undefined) delete entry.errorCode;
    else entry.errorCode = ending.errorCode;
  }
  if (ending.status === 'interrupted') return;
  const report = state.report;
  const child = ending.report;
  report.requests.total += child.requests.total;
  for (const [model, count] of Object.entries(child.requests.byModel))
    report.requests.byModel[model] = (report.requests.byModel[model] ?? 0) + count;
  report.retries.total += child.retries.total;
  report.retries.model += child.retries.model;
  report.retries.tool += child.retries.tool;
  report.retries.store += child.retries.store;
  report.fallbacks.total += child.fallbacks.total;
  for (const used of child.fallbacks.used) report.fallbacks.used.push(used);
  report.waitingMs += child.waitingMs;
  state.usage.inputTokens += child.usage.inputTokens;
  state.usage.outputTokens += child.usage.outputTokens;
  report.usage.inputTokens = state.usage.inputTokens;
  report.usage.outputTokens = state.usage.outputTokens;
  report.children ??= { total: 0, byStatus: {}, runs: [] };
  const summary = report.children;
  summary.total++;
  increment(summary.byStatus, ending.status);
  summary.runs.push({
    runId: childRunId,
    agentName: entry?.agentName ?? '',
    kind: entry?.kind ?? 'tool',
    status: ending.status,
    stopReason: ending.stopReason,
    ...(ending.errorCode === undefined ? {} : { errorCode: ending.errorCode }),
    requests: child.requests.total,
    retries: child.retries.total,
  });
  if (entry?.kind === 'handoff' && ending.status === 'completed')
    report.children.answeredBy = entry.agentName;
}

/** The parent link a run's options carry (see {@link PARENT_RUN}); undefined for a top-level run. */
export function parentRunIn(options: object): ParentRun | undefined {
  return (options as { [PARENT_RUN]?: ParentRun })[PARENT_RUN];
}
