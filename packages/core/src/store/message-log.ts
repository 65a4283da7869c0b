import type { JsonValue } from '../errors/keel-error.js';
import { lazyProperty } from '../spec/lazy-property.js';
import type { MessageLogWrite, NewRun, RunRecord } from '../spec/run-store.js';
import { messageLogGap } from './conflicts.js';

// What every store with a message log (RunStore.messageLog) does alike: the texts of a log write, the count the log
// holds after it, and a stored state put back together with its messages.

/** The messages of a log write as JSON texts, one each (its `texts` when the writer gave them). */
export function messageTextsOf(write: MessageLogWrite): readonly string[] {
  return write.texts ?? write.messages.map((message) => JSON.stringify(message));
}

/** The messages the log holds after `write`. */
export function messageCountAfter(write: MessageLogWrite): number {
  return write.start + (write.texts ?? write.messages).length;
}

/**
 * A stored state (its JSON text, whose `messages` field holds their count) with its conversation put back: `joined`
 * is the log's message texts, in order, joined with commas. The messages take the place of the count, so the state's
 * fields keep their order.
 */
export function stateWithMessages(stateText: string, joined: string): JsonValue {
  const state = JSON.parse(stateText) as Record<string, JsonValue>;
  state.messages = JSON.parse(`[${joined}]`) as JsonValue[];
  return state;
}

/**
 * The record `createRun` returns for `run` (at version 1, its lease as given), its conversation whole when its
 * messages went to the log (`messageCount` their number). Throws `store.invalid` for a log write of a new run that
 * does not start at 0: check it before writing anything.
 */
export function createdRecord(run: NewRun): RunRecord {
  const { session: _session, messages: log, ...created } = run;
  const record: RunRecord = { ...created, version: 1, updatedAtMs: run.createdAtMs };
  if (log === undefined) return record;
  // Put together only if read: a caller that wants only the version does not parse the messages back.
  withConversation(record, run);
  record.messageCount = messageCountAfter(log);
  return record;
}

/** A created record's `state` with its conversation put back, when first read. */
const withConversation = lazyProperty(
  'state',
  (run: NewRun): JsonValue => ({
    ...(run.state as Record<string, JsonValue>),
    messages: run.messages!.messages,
  }),
);

/** Throws `store.invalid` when a new run's log write does not start at 0 (its log is empty). */
export function checkNewRunLog(run: NewRun): void {
  if (run.messages !== undefined && run.messages.start !== 0)
    throw messageLogGap(run.runId, run.messages.start, 0);
}
