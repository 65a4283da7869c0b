import type { JsonValue } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';
import type { MessageLogWrite } from '../../spec/run-store.js';
import type { RunState } from '../run/run-state.js';
import type { JournalSnapshot } from './journal-log-cursor.js';

/** What one write of a durable run saves: the state as text and, for a store with a message log, the log's part. */
export interface StateSnapshot {
  /** The state serialised; for a store with a message log, its `messages` field is their count. */
  readonly text: string;
  /** The messages from `start` on, as they are and serialised (for a store with a message log only). */
  readonly log?: {
    readonly start: number;
    /** The messages from `start` on, serialised. */
    readonly texts: readonly string[];
    /** The whole conversation as it was (the same message objects), for the cursor once the write succeeded. */
    readonly conversation: readonly Message[];
  };
  /** The journal's entries since the last write, for a store with a journal log only (the text holds their count). */
  readonly journal?: JournalSnapshot;
}

/**
 * Where a durable run's message log stands: the messages its last successful write left in the store, the very
 * objects of the conversation. A snapshot writes the messages from the first one that is not that same object on: those added since
 * (an append), or, when the conversation was rewritten (a context reduction, a conversation manager that dropped or
 * summarised messages, an answer's text replaced), everything from the first message replaced. The loop never changes
 * a message in place (it replaces it), so comparing objects finds every change; it costs a pointer comparison per
 * message, not a serialisation.
 */
export class MessageLogCursor {
  private logged: readonly Message[];

  /** `logged`: the messages the store's log holds for the run (none for a run whose messages are inline). */
  constructor(logged: readonly Message[] = []) {
    this.logged = logged;
  }

  /**
   * The state's text without its messages (their count in their place) and the messages to write: from the first one
   * the log does not hold as it is now. Writes taken before earlier ones settled may write some messages twice.
   */
  snapshot(state: RunState): StateSnapshot {
    const { messages } = state;
    const { logged } = this;
    const shared = Math.min(messages.length, logged.length);
    let start = 0;
    while (start < shared && messages[start] === logged[start]) start++;
    const added = messages.slice(start);
    const texts = added.map((message) => JSON.stringify(message));
    const text = JSON.stringify({ ...state, messages: messages.length });
    return { text, log: { start, texts, conversation: messages.slice() } };
  }

  /**
   * Records a snapshot as written (its write succeeded; writes succeed in the order they were taken): the log now
   * holds its messages. A write that failed moves nothing, so the next snapshot still starts where the store's log
   * surely ends (writing again what the failed write may have written).
   */
  written(snapshot: StateSnapshot): void {
    if (snapshot.log !== undefined) this.logged = snapshot.log.conversation;
  }
}

/** A snapshot's log part as a store write (its messages parsed only if a store reads them). */
export function messageLogWriteOf(log: NonNullable<StateSnapshot['log']>): MessageLogWrite {
  let messages: JsonValue[] | undefined;
  return {
    start: log.start,
    texts: log.texts,
    get messages(): JsonValue[] {
      messages ??= log.texts.map((text) => JSON.parse(text) as JsonValue);
      return messages;
    },
  };
}
