import type { ErrorCode } from '../../errors/codes.js';
import type { RunCost } from '../../governance/run-cost.js';
import type { Usage } from '../../spec/model.js';
import type { CorrectionEventKind, DependencyKind } from '../../spec/run-events.js';

/** A breaker's move, as the report lists it. */
export interface BreakerMove {
  readonly atMs: number;
  readonly target: DependencyKind;
  /** `provider/model` or the tool's name. */
  readonly name: string;
  readonly to: 'open' | 'half-open' | 'closed';
}

/** A switch from one model to the next, as the report lists it. */
export interface FallbackRecord {
  readonly step: number;
  readonly from: string;
  readonly to: string;
  readonly errorCode: ErrorCode;
  /**
   * True when the run had used a prompt cache (read or written cached tokens) before the switch: the next model
   * starts with a cold cache, so its first requests pay for the whole prompt. Absent otherwise.
   */
  readonly promptCacheLost?: true;
}

/**
 * What happened in a run, in numbers: plain JSON, kept inside the run's state so that a resumed run keeps counting.
 *
 * `requests` counts upstream model requests actually sent (a call refused by an open breaker sends none), so it is
 * what the provider received. `errors.byCode` counts every failure the run met on its way: each failed model request,
 * each failed tool attempt, each rejected output, and the terminal error (a run interrupted to wait for a decision is
 * not an error: `run.interrupted` is never counted).
 */
export interface RunReport {
  /** Model calls started (steps), corrections and continuations included. */
  steps: number;
  requests: { total: number; byModel: Record<string, number> };
  /** Retries by what was retried; `store` counts retried writes to the run store. */
  retries: { total: number; model: number; tool: number; store: number };
  fallbacks: { total: number; used: FallbackRecord[] };
  breakerTransitions: BreakerMove[];
  corrections: { total: number; byKind: Partial<Record<CorrectionEventKind, number>> };
  contextReductions: number;
  toolCalls: {
    total: number;
    errors: number;
    byTool: Record<string, number>;
    errorsByCode: Record<string, number>;
  };
  /** Tool calls answered by a fallback (their results are marked degraded), by the tool whose call failed. */
  degradations: { total: number; byTool: Record<string, number> };
  /**
   * Calls of tools that are not idempotent whose outcome became unknown (they timed out, or their connection dropped,
   * after they may have taken effect), by tool; the repeats of such calls found out by the tool's `reconcile`
   * (`reconciled`), and those not executed (`blocked`: the run interrupted for a decision, or refused the repeat).
   * Absent until a call's outcome is unknown (and in states saved by an older keel).
   */
  uncertainCalls?: UncertainCallCounts;
  /**
   * Streamed model calls that broke after part of the answer reached the caller and were recovered by a retry: the
   * new answer `continued` the delivered text, or `restarted` the step's text. Absent until a stream is recovered
   * (and in states saved by an older keel).
   */
  streamRecoveries?: StreamRecoveryCounts;
  errors: { total: number; byCode: Record<string, number> };
  guardrailsTripped: number;
  /** Time spent waiting between retries, from the agent's clock. */
  waitingMs: number;
  usage: Usage;
  /**
   * Of the run's input tokens, the share read from the providers' prompt caches (`usage.cachedInputTokens /
   * usage.inputTokens`, 0 to 1). Absent until a provider reported cached tokens.
   */
  promptCacheHitRate?: number;
  /**
   * What the run's answered model calls cost in US dollars, by the agent's price table (`prices`). Absent until the
   * first answered call (and in states saved by an older keel).
   */
  cost?: RunCost;
  /** From the run's start to its end (or to now while it runs). */
  durationMs: number;
  /**
   * The child runs that ended (agent tools, handoffs): their figures (requests, retries, fallbacks, waits, tokens) are
   * added to this report's. Absent until a child run ends.
   */
  children?: ChildRunsSummary;
}

/** The report's child runs (see `RunReport.children`). */
export interface ChildRunsSummary {
  total: number;
  byStatus: Record<string, number>;
  runs: ChildRunSummary[];
  /** The agent that gave the run's answer through a handoff. Absent when the run answered itself. */
  answeredBy?: string;
}

/** One child run that ended, as the report lists it. */
export interface ChildRunSummary {
  readonly runId: string;
  readonly agentName: string;
  readonly kind: 'tool' | 'handoff';
  readonly status: string;
  readonly stopReason: string;
  readonly errorCode?: string;
  /** Its model requests, its own children's included. */
  readonly requests: number;
  readonly retries: number;
}

/** The report's counts of calls whose outcome is unknown (see `RunReport.uncertainCalls`). */
export interface UncertainCallCounts {
  total: number;
  byTool: Record<string, number>;
  reconciled: number;
  blocked: number;
}

/** The report's counts of recovered streams (see `RunReport.streamRecoveries`). */
export interface StreamRecoveryCounts {
  total: number;
  continued: number;
  restarted: number;
}

/** The report's stream recovery counts, made on first use. */
export function streamRecoveryCountsOf(report: RunReport): StreamRecoveryCounts {
  report.streamRecoveries ??= { total: 0, continued: 0, restarted: 0 };
  return report.streamRecoveries;
}

/** The report's uncertain-call counts, made on first use. */
export function uncertainCountsOf(report: RunReport): UncertainCallCounts {
  report.uncertainCalls ??= { total: 0, byTool: {}, reconciled: 0, blocked: 0 };
  return report.uncertainCalls;
}

/** An empty report. */
export function createReport(): RunReport {
  return {
    steps: 0,
    requests: { total: 0, byModel: {} },
    retries: { total: 0, model: 0, tool: 0, store: 0 },
    fallbacks: { total: 0, used: [] },
    breakerTransitions: [],
    corrections: { total: 0, byKind: {} },
    contextReductions: 0,
    toolCalls: { total: 0, errors: 0, byTool: {}, errorsByCode: {} },
    degradations: { total: 0, byTool: {} },
    errors: { total: 0, byCode: {} },
    guardrailsTripped: 0,
    waitingMs: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    durationMs: 0,
  };
}

/** Adds one to `counts[key]`. */
export function increment(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * Counts a failure the run met. `run.interrupted` is not one: a run that waits for a decision (or pauses at its
 * checkpoint) is in a state, shown as such, not failing.
 */
export function countError(report: RunReport, code: ErrorCode): void {
  if (code === 'run.interrupted') return;
  report.errors.total++;
  increment(report.errors.byCode, code);
}

/** Counts one upstream request to `model` (`provider/model`). */
export function countRequest(report: RunReport, model: string): void {
  report.requests.total++;
  increment(report.requests.byModel, model);
}

/** Counts one retry and the wait before it. */
export function countRetry(report: RunReport, target: DependencyKind, delayMs: number): void {
  report.retries.total++;
  report.retries[target]++;
  report.waitingMs += delayMs;
}

/** Counts one self-correction the loop asked of the model. */
export function countCorrection(report: RunReport, kind: CorrectionEventKind): void {
  report.corrections.total++;
  report.corrections.byKind[kind] = (report.corrections.byKind[kind] ?? 0) + 1;
}

/** Counts one executed tool call and, when it failed, its error code. */
export function countToolCall(report: RunReport, toolName: string, errorCode: ErrorCode | undefined): void {
  report.toolCalls.total++;
  increment(report.toolCalls.byTool, toolName);
  if (errorCode !== undefined) {
    report.toolCalls.errors++;
    increment(report.toolCalls.errorsByCode, errorCode);
  }
}

/** Counts one tool call answered by a fallback. */
export function countDegradation(report: RunReport, toolName: string): void {
  report.degradations.total++;
  increment(report.degradations.byTool, toolName);
}
