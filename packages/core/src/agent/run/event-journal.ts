import { redactSecrets } from '../../errors/redact.js';
import type { DependencyKind, RunEvent } from '../../spec/run-events.js';

/**
 * The most entries a run's journal keeps: past it, the oldest are dropped first (and counted in `dropped`). At most
 * about 60 KB of JSON in each checkpoint; a run of a few dozen steps keeps a few KB.
 */
export const EVENT_JOURNAL_LIMIT = 500;

/** The kinds of journal entry: the timed run events a timeline needs, and the run's pauses. */
export type JournalEntryType =
  | 'model-call-end'
  | 'retry-scheduled'
  | 'fallback-used'
  | 'breaker-opened'
  | 'breaker-closed'
  | 'breaker-half-opened'
  | 'correction'
  | 'tool-degraded'
  | 'context-reduced'
  | 'handoff'
  | 'run-ended'
  | 'run-resumed';

/**
 * One timed moment of a run, kept in its state. Only kinds, times, steps, names, codes and numbers: never message
 * contents, tool arguments or results, or error messages; names go through `redactSecrets`. Tool calls are not
 * journaled: the run store's ledger holds their start and end.
 */
export interface JournalEntry {
  type: JournalEntryType;
  /** When it happened, from the agent's clock (ms since the epoch). For `model-call-end`, when the call ended. */
  atMs: number;
  step?: number;
  /** Retries and breakers: which kind of dependency. */
  target?: DependencyKind;
  /** `provider/model`, the tool's name, or the breaker's name. */
  name?: string;
  /** Model calls and retries: the attempt (for a retry, the one that failed). */
  attempt?: number;
  /** An error code (a failed call, a retry's cause, a fallback's cause), a correction's kind, or a stop reason. */
  code?: string;
  /** `retry-scheduled`: the wait before the next attempt. */
  delayMs?: number;
  /** `model-call-end`: how long the call took. */
  durationMs?: number;
  /** `fallback-used`: the models; `tool-degraded`: `to` is the fallback that answered; `handoff`: the agents. */
  from?: string;
  to?: string;
  /** `model-call-end`: `success` or `error`; `run-ended`: the terminal status. */
  status?: string;
  /** `run-resumed`: when the run last saved its state before it stopped (its pause began then). */
  pausedSinceMs?: number;
}

/** A durable run's timed events, oldest first, saved with each checkpoint as `RunState.journal`. */
export interface EventJournal {
  entries: JournalEntry[];
  /** Entries dropped (oldest first) to stay within {@link EVENT_JOURNAL_LIMIT}. */
  dropped: number;
}

/** What holds a journal: the run state (typed structurally, so that this file does not import it back). */
export interface JournalHolder {
  journal?: EventJournal;
}

/** Adds an entry to the state's journal (made at the first entry), dropping the oldest past the limit. */
export function journal(state: JournalHolder, entry: JournalEntry): void {
  state.journal ??= { entries: [], dropped: 0 };
  const { entries } = state.journal;
  if (entries.length >= EVENT_JOURNAL_LIMIT) {
    const excess = entries.length - EVENT_JOURNAL_LIMIT + 1;
    entries.splice(0, excess);
    state.journal.dropped += excess;
  }
  entries.push(entry);
}

/**
 * A run event listener that journals the events a timeline needs into the state; others pass by. Handed to a durable
 * run's event sink only: a run without a store builds no events for it.
 */
export function journalingListener(state: JournalHolder): (event: RunEvent) => void {
  return (event) => {
    const entry = entryOf(event);
    if (entry !== undefined) journal(state, entry);
  };
}

function entryOf(event: RunEvent): JournalEntry | undefined {
  const { atMs } = event;
  switch (event.type) {
    case 'model-call-end': {
      const entry: JournalEntry = {
        type: event.type,
        atMs,
        step: event.step,
        name: redactSecrets(event.model),
        attempt: event.attempt,
        durationMs: event.durationMs,
        status: event.outcome,
      };
      if (event.errorCode !== undefined) entry.code = event.errorCode;
      return entry;
    }
    case 'retry-scheduled':
      return {
        type: event.type,
        atMs,
        step: event.step,
        target: event.target,
        name: redactSecrets(event.name),
        attempt: event.attempt,
        delayMs: event.delayMs,
        code: event.errorCode,
      };
    case 'fallback-used':
      return {
        type: event.type,
        atMs,
        step: event.step,
        from: redactSecrets(event.from),
        to: redactSecrets(event.to),
        code: event.errorCode,
      };
    case 'breaker-opened':
    case 'breaker-closed':
    case 'breaker-half-opened':
      return { type: event.type, atMs, target: event.target, name: redactSecrets(event.name) };
    case 'correction': {
      const entry: JournalEntry = { type: event.type, atMs, step: event.step, code: event.kind };
      if (event.toolName !== undefined) entry.name = redactSecrets(event.toolName);
      return entry;
    }
    case 'tool-degraded':
      return {
        type: event.type,
        atMs,
        step: event.step,
        name: redactSecrets(event.toolName),
        to: redactSecrets(event.fallback),
        code: event.errorCode,
      };
    case 'context-reduced':
      return { type: event.type, atMs, step: event.step };
    case 'handoff':
      return {
        type: event.type,
        atMs,
        step: event.step,
        from: redactSecrets(event.from),
        to: redactSecrets(event.to),
      };
    default:
      return undefined;
  }
}
