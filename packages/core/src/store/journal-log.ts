import type { JsonValue } from '../errors/keel-error.js';
import type { JournalLogWrite } from '../spec/run-store.js';

// What every store with a journal log (RunStore.journalLog) does alike: the texts of a write, the position after
// it, and a stored state put back together with its journal's entries.

/** The entries of a journal log write as JSON texts, one each (its `texts` when the writer gave them). */
export function journalTextsOf(write: JournalLogWrite): readonly string[] {
  return write.texts ?? write.entries.map((entry) => JSON.stringify(entry));
}

/** The position after the last entry the log holds after `write` (`RunRecord.journalEnd`). */
export function journalEndAfter(write: JournalLogWrite): number {
  return write.start + (write.texts ?? write.entries).length;
}

/**
 * A stored state (parsed) with its journal's entries put back: `joined` is the log's entry texts, in order, joined
 * with commas. The entries take the place of their count, so the journal's fields keep their order. A state without
 * a journal is left as it is.
 */
export function putJournalBack(state: JsonValue, joined: string): JsonValue {
  const journal = (state as { journal?: Record<string, JsonValue> } | null)?.journal;
  if (journal !== undefined && journal !== null && typeof journal === 'object') {
    journal.entries = JSON.parse(`[${joined}]`) as JsonValue[];
  }
  return state;
}
