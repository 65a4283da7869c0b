import type { LedgerEntry, RunState, RunSummary } from '@keel/core';
import { type JournalPlacement, placeJournal } from './journal-timeline.js';

/** The rows of the timeline chart, top to bottom. */
export const TIMELINE_LANES = [
  'queue',
  'run',
  'model',
  'retry',
  'fallback',
  'breaker',
  'correction',
  'tool',
  'checkpoint',
  'interruption',
] as const;

/** A row of the timeline chart. */
export type TimelineLane = (typeof TIMELINE_LANES)[number];

/**
 * How an entry's time is known: `exact` (the store holds its time: the ledger, the report, or the run's journal of
 * timed events), `step` (placed on its step's model window, which lies between the tool calls around it: for runs
 * saved without a journal), or `not-stored` (counted by the report, but the store keeps no time or step for it:
 * drawn across the whole run).
 */
export type TimelineTiming = 'exact' | 'step' | 'not-stored';

/** One bar or mark of the timeline. Times are ms from the run's start. */
export interface TimelineEntry {
  lane: TimelineLane;
  label: string;
  detail?: string;
  step?: number;
  startMs: number;
  endMs: number;
  timing: TimelineTiming;
  outcome: 'ok' | 'error' | 'waiting' | 'info';
}

/** A run's timeline: its entries and what could not be placed in time, said in words. */
export interface Timeline {
  /** Where the timeline begins (ms since the epoch): the run's start, or its submission for a run a worker took. */
  startedAtMs: number;
  durationMs: number;
  entries: TimelineEntry[];
  notes: string[];
}

const CORRECTION_CODES = new Set(['tool.invalid_input', 'tool.not_found']);

/**
 * Builds a run's timeline from what the store holds: the state's journal of timed events when it has one (each
 * model call, retry with its wait, fallback, correction and pause at its time), the report (breaker moves with their
 * times, fallbacks by step, retries and corrections as counts), the tool ledger (each call's start and end) and the
 * conversation (which step made which tool call). What the journal does not hold (a run saved by an older keel, or
 * events dropped from a long run's journal) is placed as before: each step's model window is the gap between the
 * tool calls before and after it, fallbacks are drawn on their step's window, retries are counted. A run a fleet's
 * worker took from the queue begins with its wait in the `queue` lane, from its submission to its start.
 */
export function buildTimeline(
  summary: RunSummary,
  state: RunState,
  ledger: readonly LedgerEntry[],
  nowMs: number,
): Timeline {
  // A run stored before it started (submitted to a fleet) waited in the queue until a worker started it.
  const queuedMs = state.startedAtMs - summary.createdAtMs;
  const start = queuedMs > 0 ? summary.createdAtMs : state.startedAtMs;
  // A run that waits (for a decision, or for a resume after its process died) is drawn up to now.
  const open = summary.status === 'running' || summary.status === 'interrupted';
  const endAt = open
    ? Math.max(nowMs, state.endedAtMs ?? state.startedAtMs)
    : (state.endedAtMs ?? summary.updatedAtMs);
  const durationMs = Math.max(0, endAt - start);
  const at = (timeMs: number) => Math.min(durationMs, Math.max(0, timeMs - start));
  const entries: TimelineEntry[] = [];
  const notes: string[] = [];
  const report = state.report;
  const runStartMs = at(state.startedAtMs);

  if (queuedMs > 0) {
    entries.push({
      lane: 'queue',
      label: 'queued: waited for a worker',
      detail: `${Math.round(queuedMs)} ms`,
      startMs: 0,
      endMs: runStartMs,
      timing: 'exact',
      outcome: 'info',
    });
  }
  entries.push({
    lane: 'run',
    label: `run ${summary.status}`,
    detail: state.stopReason === undefined ? undefined : `stop reason ${state.stopReason}`,
    startMs: runStartMs,
    endMs: durationMs,
    timing: 'exact',
    outcome: summary.status === 'failed' ? 'error' : summary.status === 'completed' ? 'ok' : 'info',
  });

  const journal: JournalPlacement | undefined =
    state.journal === undefined ? undefined : placeJournal(state.journal, at);
  const firstJournaled = journal?.firstStep ?? Number.POSITIVE_INFINITY;
  if (journal !== undefined) {
    entries.push(...journal.entries);
    notes.push(...journal.notes);
  }
  const allWindows = modelWindows(state.step, ledger, at, runStartMs, durationMs);
  // Steps whose model calls the journal holds are drawn from it.
  const windows = allWindows.filter((window) => window.firstStep < firstJournaled);
  const modelOfStep = modelNamer(state);
  // A run that failed on its model failed in its last model window.
  const modelFailed = summary.status === 'failed' && state.stopReason === 'model_error';
  for (const window of windows) {
    const steps =
      window.lastStep === window.firstStep
        ? `step ${window.firstStep}`
        : `steps ${window.firstStep}–${window.lastStep}`;
    entries.push({
      lane: 'model',
      label: `model call${window.lastStep === window.firstStep ? '' : 's'} · ${steps}`,
      detail: modelOfStep(window.firstStep, window.lastStep),
      step: window.firstStep,
      startMs: window.startMs,
      endMs: window.endMs,
      timing: 'step',
      outcome: modelFailed && window.lastStep === state.step ? 'error' : 'ok',
    });
  }
  const windowOf = (step: number) =>
    allWindows.find((window) => step >= window.firstStep && step <= window.lastStep) ?? {
      startMs: runStartMs,
      endMs: durationMs,
    };

  for (const fallback of report.fallbacks.used) {
    if (fallback.step >= firstJournaled) continue;
    const window = windowOf(fallback.step);
    entries.push({
      lane: 'fallback',
      label: `fallback ${fallback.from} → ${fallback.to}`,
      detail: `after ${fallback.errorCode}`,
      step: fallback.step,
      startMs: window.startMs,
      endMs: window.endMs,
      timing: 'step',
      outcome: 'error',
    });
  }

  const unjournaledRetries = report.retries.total - (journal?.retries ?? 0);
  if (unjournaledRetries > 0 && journal === undefined) {
    const parts = (['model', 'tool', 'store'] as const)
      .filter((target) => report.retries[target] > 0)
      .map((target) => `${target} ${report.retries[target]}`);
    entries.push(
      uncounted(
        'retry',
        `${report.retries.total} ${report.retries.total === 1 ? 'retry' : 'retries'} (${parts.join(', ')})`,
        `waited ${Math.round(report.waitingMs)} ms in all`,
        runStartMs,
        durationMs,
      ),
    );
    notes.push(
      'Retries and their waits are counted by the report, but the store keeps no time or step for each one: they are drawn across the whole run.',
    );
  } else if (unjournaledRetries > 0) {
    entries.push(
      uncounted(
        'retry',
        `${unjournaledRetries} earlier ${unjournaledRetries === 1 ? 'retry' : 'retries'} not in the journal`,
        `waited ${Math.max(0, Math.round(report.waitingMs - (journal?.waitedMs ?? 0)))} ms`,
        runStartMs,
        durationMs,
      ),
    );
  }

  for (const move of report.breakerTransitions) {
    entries.push({
      lane: 'breaker',
      label: `breaker ${move.to}: ${move.target} ${move.name}`,
      startMs: at(move.atMs),
      endMs: at(move.atMs),
      timing: 'exact',
      outcome: move.to === 'closed' ? 'ok' : 'error',
    });
  }

  const located = journal === undefined ? corrections(state, windowOf) : [];
  entries.push(...located);
  const unlocated = report.corrections.total - located.length - (journal?.corrections ?? 0);
  if (unlocated > 0 && journal !== undefined) {
    entries.push(
      uncounted(
        'correction',
        `${unlocated} earlier correction${unlocated === 1 ? '' : 's'} not in the journal`,
        undefined,
        runStartMs,
        durationMs,
      ),
    );
  } else if (unlocated > 0) {
    const kinds = Object.entries(report.corrections.byKind)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(', ');
    entries.push({
      lane: 'correction',
      label: `${report.corrections.total} correction${report.corrections.total === 1 ? '' : 's'} (${kinds})`,
      detail: located.length > 0 ? `${located.length} placed by step` : undefined,
      startMs: runStartMs,
      endMs: durationMs,
      timing: 'not-stored',
      outcome: 'info',
    });
  }

  for (const entry of ledger) {
    const completed = entry.status === 'completed';
    const failed = completed && isErrorResult(entry.result);
    entries.push({
      lane: 'tool',
      label: `${entry.toolName} · step ${entry.step} call ${entry.callIndex}`,
      detail: completed
        ? failed
          ? 'returned an error'
          : 'completed'
        : 'started, not completed: it may or may not have run',
      step: entry.step,
      startMs: at(entry.startedAtMs),
      endMs: at(entry.completedAtMs ?? endAt),
      timing: 'exact',
      outcome: completed ? (failed ? 'error' : 'ok') : 'waiting',
    });
  }

  if (state.checkpointedAtMs !== undefined) {
    entries.push({
      lane: 'checkpoint',
      label: `last checkpoint (version ${summary.version})`,
      startMs: at(state.checkpointedAtMs),
      endMs: at(state.checkpointedAtMs),
      timing: 'exact',
      outcome: 'info',
    });
    notes.push(
      'The store keeps the last checkpoint only; the loop writes one after every model response and tool call.',
    );
  }

  if (summary.status === 'interrupted' && state.endedAtMs !== undefined) {
    entries.push({
      lane: 'interruption',
      label: `waiting: ${state.stopReason ?? 'interrupted'}`,
      detail: state.pendingDecisions.map((decision) => `${decision.toolName} (${decision.kind})`).join(', '),
      startMs: at(state.endedAtMs),
      endMs: durationMs,
      timing: 'exact',
      outcome: 'waiting',
    });
  }
  if (windows.length > 0) {
    notes.push(
      'Model calls are placed between the tool calls around them (the store keeps no model call times): a window holds the call, its retries and their waits, and any time the run spent interrupted or paused before it.',
    );
  }
  const order = (entry: TimelineEntry) => TIMELINE_LANES.indexOf(entry.lane);
  entries.sort((left, right) => left.startMs - right.startMs || order(left) - order(right));
  return { startedAtMs: start, durationMs, entries, notes };
}

/** A count the report keeps without times: drawn across the whole run, from its start. */
function uncounted(
  lane: TimelineLane,
  label: string,
  detail: string | undefined,
  runStartMs: number,
  durationMs: number,
): TimelineEntry {
  return {
    lane,
    label,
    ...(detail === undefined ? {} : { detail }),
    startMs: runStartMs,
    endMs: durationMs,
    timing: 'not-stored',
    outcome: lane === 'retry' ? 'error' : 'info',
  };
}

interface ModelWindow {
  firstStep: number;
  lastStep: number;
  startMs: number;
  endMs: number;
}

/**
 * Each step's model call happened after the previous step's tool calls ended and before its own began. Steps with no
 * tool calls between them share one window (there is nothing to tell their calls apart).
 */
function modelWindows(
  steps: number,
  ledger: readonly LedgerEntry[],
  at: (timeMs: number) => number,
  runStartMs: number,
  durationMs: number,
): ModelWindow[] {
  const windows: ModelWindow[] = [];
  let startMs = runStartMs;
  let firstStep = 1;
  for (let step = 1; step <= steps; step++) {
    const calls = ledger.filter((entry) => entry.step === step);
    if (calls.length === 0 && step < steps) continue;
    const endMs = calls.length === 0 ? durationMs : Math.min(...calls.map((entry) => at(entry.startedAtMs)));
    windows.push({ firstStep, lastStep: step, startMs, endMs: Math.max(startMs, endMs) });
    const ends = calls.map((entry) =>
      entry.completedAtMs === undefined ? durationMs : at(entry.completedAtMs),
    );
    startMs = ends.length === 0 ? endMs : Math.max(endMs, ...ends);
    firstStep = step + 1;
  }
  return windows;
}

/** Which models a window's steps used: the primary until a fallback, then the model it fell back to. */
function modelNamer(state: RunState): (firstStep: number, lastStep: number) => string | undefined {
  const used = state.report.fallbacks.used;
  const primary = used[0]?.from ?? Object.keys(state.report.requests.byModel)[0];
  return (firstStep, lastStep) => {
    let model = primary;
    for (const fallback of used) if (fallback.step < firstStep) model = fallback.to;
    const chain = model === undefined ? [] : [model];
    for (const fallback of used) {
      if (fallback.step >= firstStep && fallback.step <= lastStep) chain.push(fallback.to);
    }
    return chain.length === 0 ? undefined : chain.join(' → ');
  };
}

/**
 * Tool calls the loop sent back to the model for correction (unknown tool, invalid arguments), located by the step
 * of the assistant message that made them. Only while the conversation is whole: a context reduction drops messages,
 * and then steps can no longer be counted from it.
 */
function corrections(
  state: RunState,
  windowOf: (step: number) => { startMs: number; endMs: number },
): TimelineEntry[] {
  if (state.report.contextReductions > 0) return [];
  const found: TimelineEntry[] = [];
  let step = 0;
  for (const message of state.messages) {
    if (message.role === 'assistant') step++;
    if (message.role !== 'tool' || message.isError !== true) continue;
    const code = errorCodeOf(message.content);
    if (code === undefined || !CORRECTION_CODES.has(code)) continue;
    const window = windowOf(step);
    found.push({
      lane: 'correction',
      label: `correction: ${message.toolName} (${code})`,
      step,
      startMs: window.endMs,
      endMs: window.endMs,
      timing: 'step',
      outcome: 'info',
    });
  }
  return found;
}

function errorCodeOf(content: string): string | undefined {
  try {
    const parsed = JSON.parse(content) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : undefined;
  } catch {
    return undefined;
  }
}

function isErrorResult(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { status?: unknown }).status === 'error';
}
