import type { JsonValue } from '../../errors/keel-error.js';
import { lazyProperty } from '../../spec/lazy-property.js';
import type { JournalLogWrite } from '../../spec/run-store.js';
import type { EventJournal } from '../run/event-journal.js';

/** A snapshot's journal part, for a store with a journal log (`RunStore.journalLog`). */
export interface JournalSnapshot {
  /** The position of `texts[0]` in the journal. */
  readonly start: number;
  /** The entries from `start` on, serialised. */
  readonly texts: readonly string[];
  /** The entries dropped from the journal's front. */
  readonly dropped: number;
  /** The position after the journal's last entry: where the log ends once the write succeeded. */
  readonly end: number;
  /** What the state's text holds in place of the journal: its entries' count, and `dropped`. */
  readonly field: { entries: number; dropped: number };
}

/**
 * Where a durable run's journal log stands: the position after the last entry its last successful write left in the
 * store. A journal only grows at its end and drops at its front, so an entry's position (`dropped` plus its index)
 * never changes, and a snapshot writes the entries from that position on: those added since, a few bytes a step
 * rather than the whole journal.
 */
export class JournalLogCursor {
  /** `loggedEnd`: where the store's log of the run ends (`RunRecord.journalEnd`); none for a journal inline. */
  constructor(private loggedEnd: number | undefined = undefined) {}

  /** The journal's part of a write: the entries the log does not hold yet; undefined for a run without a journal. */
  snapshot(journal: EventJournal | undefined): JournalSnapshot | undefined {
    if (journal === undefined) return undefined;
    const { entries, dropped } = journal;
    const end = dropped + entries.length;
    const start = Math.min(Math.max(this.loggedEnd ?? dropped, dropped), end);
    const texts = entries.slice(start - dropped).map((entry) => JSON.stringify(entry));
    return { start, texts, dropped, end, field: { entries: entries.length, dropped } };
  }

  /** Records a snapshot as written (its write succeeded, in order): the log now ends where it ended. */
  written(snapshot: JournalSnapshot | undefined): void {
    if (snapshot !== undefined) this.loggedEnd = snapshot.end;
  }
}

/** A snapshot's journal part as a store write (its entries parsed only if a store reads them). */
export function journalLogWriteOf(journal: JournalSnapshot): JournalLogWrite {
  const write = { start: journal.start, texts: journal.texts, dropped: journal.dropped };
  return withParsedEntries(write, journal.texts) as typeof write & { entries: JsonValue[] };
}

/** A journal write's `entries`, parsed from their texts when first read. */
const withParsedEntries = lazyProperty('entries', (texts: readonly string[]) =>
  texts.map((text) => JSON.parse(text) as JsonValue),
);
