import type { Message, ToolCall } from '@keel/core';
import { type Brain, type BrainToolCall, defaultBrain } from '@keel/simulated';
import { MAX_RECALLS } from './scenario.js';

/**
 * The simulated model's default brain, except that after a tool call failed it calls the same tool again with the
 * same arguments, whatever the error says (a timeout's `retryable`, or a `tool.outcome_unknown` telling it not to),
 * at most {@link MAX_RECALLS} times per call: the model of the `tool-timeout-recall` scenario, as models behave after
 * a timeout. Once nothing is left to recall, the default brain answers.
 */
export const recallingBrain: Brain = (request) => {
  const { messages } = request;
  if (messages.at(-1)?.role !== 'tool') return defaultBrain(request);
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const sinceUser = messages.slice(lastUser + 1);
  const calls = new Map<string, ToolCall>();
  const made = new Map<string, number>();
  for (const message of sinceUser) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      calls.set(call.id, call);
      const key = callKey(call);
      made.set(key, (made.get(key) ?? 0) + 1);
    }
  }
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  const recalls: BrainToolCall[] = [];
  for (const message of messages.slice(lastAssistant + 1)) {
    if (!isFailedToolMessage(message)) continue;
    const call = calls.get(message.toolCallId);
    if (call === undefined || (made.get(callKey(call)) ?? 0) > MAX_RECALLS) continue;
    const parsed = parseArguments(call.arguments);
    if (parsed !== undefined) recalls.push({ name: call.name, arguments: parsed });
  }
  if (recalls.length === 0) return defaultBrain(request);
  return { content: 'That call failed; trying it again.', toolCalls: recalls };
};

/** Words that make a tool result read as a failure, whatever shape a framework gives it (some send the bare message). */
const FAILURE_WORDS = /\b(error|errors|failed|failure|timed out|timeout|did not arrive in time)\b/i;

/** A tool result that reads as a failure: `isError` (keel's shape, an `error` field), or failure words in its text. */
function isFailedToolMessage(message: Message): message is Extract<Message, { role: 'tool' }> {
  if (message.role !== 'tool') return false;
  if (message.isError === true) return true;
  const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  return !/"status":"success"/.test(text) && FAILURE_WORDS.test(text);
}

function callKey(call: ToolCall): string {
  return `${call.name}\u0000${call.arguments}`;
}

function parseArguments(text: string): Record<string, never> | undefined {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, never>)
      : undefined;
  } catch {
    return undefined;
  }
}
