// The pieces of a durable run's writes that need no store: what a write saves (a checkpoint of a state snapshot),
// which transitions may wait for the next write, and the journal entries a pause leaves in the state.
import type { JsonValue } from '../../errors/keel-error.js';
import { lazyProperty } from '../../spec/lazy-property.js';
import type { CheckpointWrite, RunRecord } from '../../spec/run-store.js';
import type { ToolSlot } from '../run/agent-runtime.js';
import { journal } from '../run/event-journal.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState, type RunTransition } from '../run/run-state.js';
import { journalLogWriteOf } from './journal-log-cursor.js';
import { messageLogWriteOf, type StateSnapshot } from './message-log-cursor.js';

/**
 * Journals a run's ends and resumptions, with the moment its pause began (its last checkpoint before it stopped:
 * an interrupted run's end, or the last save of a process that died), which the resume is about to overwrite.
 */
export function journalPause(transition: RunTransition, state: RunState, nowMs: number): void {
  if (transition.kind === 'run-resumed') {
    journal(state, {
      type: 'run-resumed',
      atMs: nowMs,
      step: state.step,
      ...(state.checkpointedAtMs === undefined ? {} : { pausedSinceMs: state.checkpointedAtMs }),
    });
  } else if (transition.kind === 'run-ended') {
    journal(state, {
      type: 'run-ended',
      atMs: state.endedAtMs ?? nowMs,
      step: state.step,
      status: transition.status,
      ...(state.stopReason === undefined ? {} : { code: state.stopReason }),
    });
  }
}

/**
 * A checkpoint of a state snapshot (its text, and the messages for the store's log if it keeps one). Its `state` is
 * parsed only if a store reads it: a store's `commitStep` takes the text as it is (`stateText`), so the state is
 * serialised once per write, not three times.
 */
export function checkpointOf(
  fields: Pick<CheckpointWrite, 'expectedVersion' | 'owner' | 'status' | 'nowMs'>,
  snapshot: StateSnapshot,
): CheckpointWrite {
  const { text, log, journal } = snapshot;
  const checkpoint = {
    expectedVersion: fields.expectedVersion,
    owner: fields.owner,
    status: fields.status,
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    nowMs: fields.nowMs,
    ...(log === undefined ? {} : { messages: messageLogWriteOf(log) }),
    ...(journal === undefined ? {} : { journal: journalLogWriteOf(journal) }),
  };
  return withParsedState(checkpoint, text) as typeof checkpoint & { state: JsonValue };
}

/** A checkpoint's `state`, parsed from its text when first read. */
const withParsedState = lazyProperty('state', (text: string) => JSON.parse(text) as JsonValue);

/**
 * Whether a loaded record holds what `snapshot` wrote at `version` (a write whose answer was lost may have landed):
 * the same version, the same state and, with a message log or a journal log, as many messages and entries.
 */
export function holdsSnapshot(record: RunRecord, version: number, snapshot: StateSnapshot): boolean {
  if (record.version !== version) return false;
  const { log, journal } = snapshot;
  if (log === undefined && journal === undefined) return JSON.stringify(record.state) === snapshot.text;
  const state = { ...(record.state as Record<string, JsonValue>) };
  if (log !== undefined) {
    if (record.messageCount !== log.start + log.texts.length || !Array.isArray(state.messages)) return false;
    state.messages = state.messages.length;
  }
  if (journal !== undefined) {
    if (record.journalEnd !== journal.end) return false;
    const stored = state.journal as { entries?: unknown } | undefined;
    if (stored === undefined || !Array.isArray(stored.entries)) return false;
    state.journal = { ...stored, entries: stored.entries.length } as JsonValue;
  }
  return JSON.stringify(state) === snapshot.text;
}

/**
 * How long an idempotent call's start and end wait for the next write (see {@link carriedByNext}) before they are
 * written anyway: a call that ends sooner costs no write of its own, a slower one has the model's response saved
 * while it runs.
 */
export const IDEMPOTENT_WAIT_MS = 100;

/**
 * Whether a transition's write can wait for the next one: only local work (checks, guardrails, bookkeeping) comes
 * between them. A model response waits for its first call's start or the run's end; the last call of a step to
 * complete waits for the step's end. With `idempotentCall` (a call of an idempotent tool, on a store that takes
 * `StepCommit.toolsRan`), the call's start and end wait for the next write too: running it again after a crash is
 * harmless, so neither need be saved before what follows (a crash before the next write asks the model again, or
 * runs the call again).
 */
export function carriedByNext(transition: RunTransition, state: RunState, idempotentCall = false): boolean {
  if (transition.kind === 'model-response-received') return true;
  if (transition.kind === 'tool-call-started') return idempotentCall;
  if (transition.kind !== 'tool-call-completed') return false;
  return idempotentCall || state.pendingToolCalls.every((call) => call.status === 'completed');
}

/**
 * Whether a transition is the start or end of a call that may run again harmlessly: its tool is idempotent, and so is
 * every fallback tool that may run in its place.
 */
export function isIdempotentCall(transition: RunTransition, tools: ReadonlyMap<string, ToolSlot>): boolean {
  if (transition.kind !== 'tool-call-started' && transition.kind !== 'tool-call-completed') return false;
  const slot = tools.get(transition.toolName);
  return (
    slot?.tool.idempotent === true &&
    slot.fallbacks.every((fallback) => fallback.slot === undefined || fallback.slot.tool.idempotent === true)
  );
}
