import type { EventJournal, JournalEntry } from '@keel/core';
import type { TimelineEntry } from './timeline.js';

/** What a run's journal places in time, and what is left for the report's counts to say. */
export interface JournalPlacement {
  entries: TimelineEntry[];
  /** The first step whose model call the journal holds (Infinity when none): earlier steps are placed by step. */
  firstStep: number;
  retries: number;
  waitedMs: number;
  corrections: number;
  notes: string[];
}

/**
 * Timeline entries from a durable run's journal (`RunState.journal`), at the times it recorded: each model call
 * attempt as its span, each retry at its time with its wait as a span, fallbacks (of models and of tools) and
 * corrections as moments, and each pause between a run's stop and its resumption. `at` turns a time since the epoch
 * into ms since the run's start.
 */
export function placeJournal(journal: EventJournal, at: (timeMs: number) => number): JournalPlacement {
  const placement: JournalPlacement = {
    entries: [],
    firstStep: Number.POSITIVE_INFINITY,
    retries: 0,
    waitedMs: 0,
    corrections: 0,
    notes: [],
  };
  let lastEnd: JournalEntry | undefined;
  for (const entry of journal.entries) {
    const placed = placeEntry(entry, at, lastEnd);
    if (placed !== undefined) placement.entries.push({ ...placed, timing: 'exact' });
    if (entry.type === 'model-call-end' && entry.step !== undefined)
      placement.firstStep = Math.min(placement.firstStep, entry.step);
    if (entry.type === 'retry-scheduled') {
      placement.retries++;
      placement.waitedMs += entry.delayMs ?? 0;
    }
    if (entry.type === 'correction') placement.corrections++;
    if (entry.type === 'run-ended') lastEnd = entry;
    if (entry.type === 'run-resumed') lastEnd = undefined;
  }
  if (journal.dropped > 0) {
    placement.notes.push(
      `The run's journal keeps its last ${journal.entries.length} timed events: ${journal.dropped} earlier ${journal.dropped === 1 ? 'one was' : 'ones were'} dropped, so what came before is placed by step or counted.`,
    );
  }
  placement.notes.push(
    "Model calls, retries with their waits, fallbacks, corrections and pauses are drawn at the times the run's journal recorded.",
  );
  return placement;
}

type Placed = Omit<TimelineEntry, 'timing'>;

function placeEntry(
  entry: JournalEntry,
  at: (timeMs: number) => number,
  lastEnd: JournalEntry | undefined,
): Placed | undefined {
  const moment = { startMs: at(entry.atMs), endMs: at(entry.atMs) };
  const step = entry.step === undefined ? {} : { step: entry.step };
  switch (entry.type) {
    case 'model-call-end':
      return {
        lane: 'model',
        label: `model call · step ${entry.step}${(entry.attempt ?? 1) > 1 ? ` attempt ${entry.attempt}` : ''}`,
        detail: entry.code === undefined ? entry.name : `${entry.name} · ${entry.code}`,
        ...step,
        startMs: at(entry.atMs - (entry.durationMs ?? 0)),
        endMs: at(entry.atMs),
        outcome: entry.status === 'error' ? 'error' : 'ok',
      };
    case 'retry-scheduled':
      return {
        lane: 'retry',
        label: `retry of ${entry.name} (${entry.target})`,
        detail: `after ${entry.code} on attempt ${entry.attempt}, waited ${Math.round(entry.delayMs ?? 0)} ms`,
        ...step,
        startMs: at(entry.atMs),
        endMs: at(entry.atMs + (entry.delayMs ?? 0)),
        outcome: 'error',
      };
    case 'fallback-used':
      return {
        lane: 'fallback',
        label: `fallback ${entry.from} → ${entry.to}`,
        detail: `after ${entry.code}`,
        ...step,
        ...moment,
        outcome: 'error',
      };
    case 'tool-degraded':
      return {
        lane: 'fallback',
        label: `tool fallback ${entry.name} → ${entry.to}`,
        detail: `after ${entry.code}`,
        ...step,
        ...moment,
        outcome: 'error',
      };
    case 'correction':
      return {
        lane: 'correction',
        label: `correction: ${entry.name === undefined ? entry.code : `${entry.name} (${entry.code})`}`,
        ...step,
        ...moment,
        outcome: 'info',
      };
    case 'run-resumed': {
      if (entry.pausedSinceMs === undefined) return undefined;
      const waited = lastEnd?.status === 'interrupted';
      return {
        lane: 'interruption',
        label: waited ? `waited: ${lastEnd?.code ?? 'interrupted'}, then resumed` : 'stopped, then resumed',
        detail: waited
          ? undefined
          : 'the process stopped without ending the run (from its last checkpoint to its resumption)',
        ...step,
        startMs: at(entry.pausedSinceMs),
        endMs: at(entry.atMs),
        outcome: 'waiting',
      };
    }
    default:
      // Breaker moves come from the report (which keeps them for every run); run ends are read with the resumptions.
      return undefined;
  }
}
