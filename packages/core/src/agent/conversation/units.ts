import type { Message } from '../../spec/model.js';

/**
 * Messages that must stay or go together: an assistant message with tool calls and the tool results answering it,
 * or a single other message. Removing half of a unit leaves a tool result without its call (or a call without its
 * result), which providers reject.
 */
export interface MessageUnit {
  /** Index of the unit's first message in the conversation. */
  start: number;
  messages: Message[];
  /** Kept whatever happens: system messages and the first user message (the task). */
  pinned: boolean;
}

/** Splits a conversation into units, in order. */
export function toUnits(messages: readonly Message[]): MessageUnit[] {
  const units: MessageUnit[] = [];
  let firstUserSeen = false;
  for (let index = 0; index < messages.length; ) {
    const message = messages[index]!;
    const unit: MessageUnit = { start: index, messages: [message], pinned: false };
    index++;
    if (message.role === 'system') unit.pinned = true;
    else if (message.role === 'user' && !firstUserSeen) {
      unit.pinned = true;
      firstUserSeen = true;
    } else if (
      message.role === 'assistant' &&
      message.toolCalls !== undefined &&
      message.toolCalls.length > 0
    ) {
      const callIds = new Set(message.toolCalls.map((call) => call.id));
      while (index < messages.length) {
        const next = messages[index]!;
        if (next.role !== 'tool' || !callIds.has(next.toolCallId)) break;
        unit.messages.push(next);
        index++;
      }
    }
    units.push(unit);
  }
  return units;
}

/** Counts the messages in `units`. */
export function countMessages(units: readonly MessageUnit[]): number {
  return units.reduce((total, unit) => total + unit.messages.length, 0);
}
