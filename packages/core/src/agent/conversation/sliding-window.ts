import { KeelError } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';
import type { ConversationManager, ConversationReduceContext, ConversationReduction } from './manager.js';
import { countMessages, toUnits } from './units.js';

/** Options of {@link slidingWindow}. */
export interface SlidingWindowOptions {
  /** Most messages kept after a reduction, and of a session's history at the start of a run. Defaults to 40; at least 2. */
  maxMessages?: number;
}

/**
 * Reduces a conversation by dropping its oldest messages. A reduction keeps at most `maxMessages`; when the
 * conversation is already within that and still overflows, it halves it. Never removed: system messages, the first
 * user message (the task), the last user message and the most recent exchange. An assistant message with tool calls
 * and the tool results answering it are dropped together, never one without the other. Reports `reduced: false`
 * when nothing is left to drop. A session's history is bounded the same way before each run on the session: at most
 * `maxMessages` of it are sent to the model (the store keeps it all), cut in steps of a quarter of `maxMessages`
 * (from 3/4 of it up to all of it is kept), so that the start of the history sent stays the same for several runs
 * and the provider's prompt cache keeps hitting (cutting to exactly `maxMessages` would move it at every run).
 *
 * @example
 *   agent({ model, conversationManager: slidingWindow({ maxMessages: 30 }) });
 */
export function slidingWindow(options: SlidingWindowOptions = {}): ConversationManager {
  const maxMessages = options.maxMessages ?? 40;
  if (!Number.isInteger(maxMessages) || maxMessages < 2) {
    throw new KeelError(
      'config.invalid',
      `slidingWindow maxMessages must be an integer of at least 2 (got ${String(maxMessages)})`,
    );
  }
  return Object.freeze({
    name: 'sliding-window',
    async reduce(
      messages: readonly Message[],
      _context: ConversationReduceContext,
    ): Promise<ConversationReduction> {
      const limit = messages.length > maxMessages ? maxMessages : Math.floor(messages.length / 2);
      const remaining = keepWithin(messages, limit);
      return { messages: remaining, reduced: remaining.length < messages.length };
    },
    bound(history: readonly Message[]): Message[] {
      if (history.length <= maxMessages) return [...history];
      // Cut in steps of a quarter window, so that the oldest message kept (and the prompt cache's prefix) stays the
      // same over the next runs instead of moving with every message added.
      const step = Math.max(1, Math.floor(maxMessages / 4));
      const dropped = Math.ceil((history.length - maxMessages) / step) * step;
      return keepWithin(history, history.length - dropped);
    },
  });
}

/**
 * Drops the oldest units until at most `limit` messages are left (or nothing more may go): never a pinned unit, the
 * last user message or the last unit.
 */
function keepWithin(messages: readonly Message[], limit: number): Message[] {
  const units = toUnits(messages);
  let lastUser = -1;
  units.forEach((unit, index) => {
    if (unit.messages[0]!.role === 'user') lastUser = index;
  });
  const kept = units.map(() => true);
  let count = countMessages(units);
  for (let index = 0; index < units.length - 1 && count > limit; index++) {
    if (units[index]!.pinned || index === lastUser) continue;
    kept[index] = false;
    count -= units[index]!.messages.length;
  }
  return units.filter((_, index) => kept[index]).flatMap((unit) => unit.messages);
}
