import type { Message } from '../../spec/model.js';

/** Why the loop asks for a smaller conversation. */
export interface ConversationReduceContext {
  /** The model rejected the request as larger than its context window (`provider.context_overflow`). */
  reason: 'context_overflow';
  /** 1 on the first reduction for this step, 2 if the reduced conversation overflowed again, and so on. */
  attempt: number;
  /** Aborted when the run is cancelled; a manager that calls a model must pass it on. */
  signal?: AbortSignal;
}

/** What a reduction produced. */
export interface ConversationReduction {
  messages: Message[];
  /** False when nothing could be removed: the loop then ends the run with `provider.context_overflow`. */
  reduced: boolean;
}

/** Shrinks a conversation that no longer fits the model's context window (the Strands `reduce_context` idea). */
export interface ConversationManager {
  /** Names the strategy in events and the report. */
  readonly name: string;
  reduce(messages: readonly Message[], context: ConversationReduceContext): Promise<ConversationReduction>;
  /**
   * Bounds a session's history before a run on the session starts: returns the part of it the run sends to the model
   * (the session's store keeps the whole history either way). Optional: a manager without it sends the whole history
   * and reduces it only on a context overflow. `slidingWindow` keeps its last `maxMessages`.
   */
  bound?(history: readonly Message[]): Message[];
}

/**
 * A manager that never reduces: a context overflow ends the run with `provider.context_overflow`.
 *
 * @example
 *   agent({ model, conversationManager: noReduction() });
 */
export function noReduction(): ConversationManager {
  return Object.freeze({
    name: 'no-reduction',
    async reduce(messages: readonly Message[]): Promise<ConversationReduction> {
      return { messages: [...messages], reduced: false };
    },
  });
}
