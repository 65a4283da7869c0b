import { KeelError } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';
import type { ConversationManager, ConversationReduceContext, ConversationReduction } from './manager.js';
import { type MessageUnit, toUnits } from './units.js';

/** Options of {@link summarizing}. */
export interface SummarizingOptions {
  /**
   * Summarises the older messages. Required. The run loop passes one that asks the model; pass `context.signal` on to
   * any call it makes.
   */
  summarize: (messages: Message[], context: { signal?: AbortSignal }) => Promise<string>;
  /** Recent messages kept word for word on the first reduction; halved on each further attempt. Defaults to 10. */
  keepRecent?: number;
}

/** The start of the message that replaces the summarised part of the conversation. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation';

/**
 * Reduces a conversation by replacing its older part with a summary (as one user message starting with
 * {@link SUMMARY_PREFIX}). Kept word for word: system messages, the first user message and the last `keepRecent`
 * messages (rounded up to whole exchanges: a tool call is never separated from its results). A later reduction
 * summarises the earlier summary again along with what followed it. Reports `reduced: false` when there is nothing
 * old enough to summarise.
 *
 * @example
 *   agent({ model, conversationManager: summarizing({ summarize: (messages) => mySummaryModel(messages), keepRecent: 8 }) });
 */
export function summarizing(options: SummarizingOptions): ConversationManager {
  if (typeof options?.summarize !== 'function') {
    throw new KeelError('config.invalid', 'summarizing needs a summarize function');
  }
  const keepRecent = options.keepRecent ?? 10;
  if (!Number.isInteger(keepRecent) || keepRecent < 1) {
    throw new KeelError(
      'config.invalid',
      `summarizing keepRecent must be a positive integer (got ${String(keepRecent)})`,
    );
  }
  return Object.freeze({
    name: 'summarizing',
    async reduce(
      messages: readonly Message[],
      context: ConversationReduceContext,
    ): Promise<ConversationReduction> {
      const units = toUnits(messages);
      const keep = Math.max(1, Math.floor(keepRecent / 2 ** Math.max(0, context.attempt - 1)));
      // The recent window: whole units from the end, at least the last one.
      let recentStart = units.length;
      let recentCount = 0;
      while (recentStart > 0 && (recentCount < keep || recentStart === units.length)) {
        recentStart--;
        recentCount += units[recentStart]!.messages.length;
      }
      const older = units.slice(0, recentStart);
      const pinned = older.filter((unit) => unit.pinned);
      const summarised = older.filter((unit) => !unit.pinned);
      if (summarised.length === 0) return { messages: [...messages], reduced: false };
      if (context.signal?.aborted) throw context.signal.reason;
      const summary = await options.summarize(flatten(summarised), { signal: context.signal });
      if (typeof summary !== 'string' || summary.trim() === '') {
        throw new KeelError(
          'config.invalid',
          'the summarize function of summarizing() must resolve to a non-empty string',
        );
      }
      const count = summarised.reduce((total, unit) => total + unit.messages.length, 0);
      const summaryMessage: Message = {
        role: 'user',
        content: `${SUMMARY_PREFIX} (${count} messages replaced to fit the context window):\n${summary}`,
      };
      return {
        messages: [...flatten(pinned), summaryMessage, ...flatten(units.slice(recentStart))],
        reduced: true,
      };
    },
  });
}

function flatten(units: readonly MessageUnit[]): Message[] {
  return units.flatMap((unit) => unit.messages);
}
