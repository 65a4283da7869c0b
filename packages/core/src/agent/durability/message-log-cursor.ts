import type { JsonValue } from '../../errors/keel-error.js';
import { lazyProperty } from '../../spec/lazy-property.js';
import type { Message } from '../../spec/model.js';
import type { MessageLogWrite } from '../../spec/run-store.js';
import type { RunState } from '../run/run-state.js';
import type { JournalSnapshot } from './journal-log-cursor.js';

/** What one write of a durable run saves: the state as text and, for a store with a message log, the log's part. */
export interface StateSnapshot {
  /** The state serialised; for a store with a message log, its `messages` field is their count. */
  readonly text: string;
  /** The messages from `start` on, as they are and serialised (for a store with a message log only). */
  readonly log?: MessageLogPart;
  /** The journal's entries since the last write, for a store with a journal log only (the text holds their count). */
  readonly journal?: JournalSnapshot;
}

/**
 * The message log's part of a snapshot: the messages from `start` on, the same objects as in the conversation (in a
 * new array), serialised when a store first reads `texts`, not before. The loop never changes a message in place (it
 * replaces it: see {@link MessageLogCursor}), so the texts are the same whenever they are made; made late, they live
 * only as long as the store's write does. A run's first write may hold a long conversation: its thousand texts made
 * early and kept while the run went on outlived young-generation collections and were copied and promoted (measured:
 * 2-4 MB of survivors a scavenge at 1,000 messages of history against under 1 MB at 10).
 */
export class MessageLogPart {
  private serialised: readonly string[] | undefined;

  /**
   * `start`: the index in the conversation of `messages[0]`. `messages`: the messages from `start` on, for the
   * cursor once the write succeeded; from a new cursor (`start` 0), the whole conversation as it was.
   */
  constructor(
    readonly start: number,
    readonly messages: readonly Message[],
  ) {}

  /** The messages from `start` on, one JSON text each (made on the first read). */
  get texts(): readonly string[] {
    this.serialised ??= this.messages.map((message) => JSON.stringify(message));
    return this.serialised;
  }
}

/**
 * Where a durable run's message log stands: the messages its last successful write left in the store, the very
 * objects of the conversation. A snapshot writes the messages from the first one that is not that same object on:
 * those added since (an append), or, when the conversation was rewritten (a context reduction, a conversation manager
 * that dropped or summarised messages, an answer's text replaced), everything from the first message replaced. The
 * loop never changes a message in place (it replaces it), so comparing objects finds every change; it costs a pointer
 * comparison per message, not a serialisation. The cursor keeps its own array of the logged messages and moves it as
 * the store's log moves (cut at a write's `start`, its messages appended), so a write copies only the messages it
 * writes, never the whole conversation: a long conversation costs each write no more memory than a short one.
 */
export class MessageLogCursor {
  /** The messages the store's log holds, in order: this cursor's own array, moved as writes succeed. */
  private readonly logged: Message[];

  /** `logged`: the messages the store's log holds for the run (none for a run whose messages are inline); copied. */
  constructor(logged: readonly Message[] = []) {
    this.logged = logged.slice();
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
    const text = JSON.stringify({ ...state, messages: messages.length });
    return { text, log: new MessageLogPart(start, messages.slice(start)) };
  }

  /**
   * Records a snapshot as written (its write succeeded; writes succeed in the order they were taken): the log now
   * holds what it held before `start`, then the snapshot's messages, as the store's log does after the write. A write
   * that failed moves nothing, so the next snapshot still starts where the store's log surely ends (writing again
   * what the failed write may have written). Costs the snapshot's messages, not the conversation's length.
   */
  written(snapshot: StateSnapshot): void {
    const { log } = snapshot;
    if (log === undefined) return;
    const { logged } = this;
    // A store refuses a write that starts past its log's end, so `start` is never past the cursor's end either.
    if (log.start < logged.length) logged.length = log.start;
    for (const message of log.messages) logged.push(message);
  }
}

/** A snapshot's log part as a store write (its messages serialised, and parsed back, only if a store reads them). */
export function messageLogWriteOf(log: MessageLogPart): MessageLogWrite {
  return withParsedMessages(withTexts({ start: log.start }, log), log) as MessageLogWrite;
}

/** A log write's `texts`, the part's (serialised when first read). */
const withTexts = lazyProperty('texts', (log: MessageLogPart) => log.texts);
/** A log write's `messages`, parsed from the part's texts when first read. */
const withParsedMessages = lazyProperty('messages', (log: MessageLogPart) =>
  log.texts.map((text) => JSON.parse(text) as JsonValue),
);
