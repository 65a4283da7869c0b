import type { JsonValue } from '@keel/core';
import type { SimulatedRequestRecord } from '@keel/simulated';

/** How the child agent's failures reached the parent's model, in a nested scenario. */
export interface ChildErrorsSeen {
  /** Tool results of the child's tool that said it failed, with an error code (`{"error":{"code":...}}`). */
  readonly typed: number;
  /** Tool results of the child's tool that said it failed in words only, with no code to act on. */
  readonly untyped: number;
}

interface WireMessage {
  readonly role?: string;
  readonly content?: JsonValue;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { readonly id?: string; readonly function?: { readonly name?: string } }[];
}

/** The simulated model's answer, which a child that completed returns as its output. */
const ANSWER_START = 'Here is what I found';

/**
 * The child's failures as the parent's model read them: in each chat completion request to one of `parentModels`,
 * the results of calls of `toolName` that arrived since the model's last message (each result is counted once, in
 * the request that first carries it) and say the child failed. A result is a failure when it is an error object
 * (`{"status":"error",...}` or `{"error":...}`: typed when the error has a string `code`), or text that mentions an
 * error and is not the simulated model's answer (untyped: a sentence such as the OpenAI Agents SDK's default "An
 * error occurred while running the tool. Please try again. Error: ...").
 */
export function childErrorsSeen(
  requests: readonly SimulatedRequestRecord[],
  parentModels: readonly string[],
  toolName: string,
): ChildErrorsSeen {
  let typed = 0;
  let untyped = 0;
  for (const request of requests) {
    if (request.path !== '/v1/chat/completions' || !parentModels.includes(request.model ?? '')) continue;
    const messages = messagesOf(request.body);
    const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
    if (lastAssistant === -1) continue;
    const calls = new Set(
      (messages[lastAssistant]!.tool_calls ?? [])
        .filter((call) => call.function?.name === toolName)
        .map((call) => call.id),
    );
    for (const message of messages.slice(lastAssistant + 1)) {
      if (message.role !== 'tool' || !calls.has(message.tool_call_id)) continue;
      const verdict = failureOf(message.content);
      if (verdict === 'typed') typed++;
      else if (verdict === 'untyped') untyped++;
    }
  }
  return { typed, untyped };
}

function messagesOf(body: JsonValue | undefined): WireMessage[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const messages = (body as { messages?: JsonValue }).messages;
  return Array.isArray(messages) ? (messages as WireMessage[]) : [];
}

function failureOf(content: JsonValue | undefined): 'typed' | 'untyped' | undefined {
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((part) =>
              typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '',
            )
            .join('')
        : JSON.stringify(content ?? null);
  const parsed = parseObject(text);
  if (parsed !== undefined) {
    const error = parsed.error;
    if (parsed.status !== 'error' && error === undefined) return undefined;
    const code =
      typeof error === 'object' && error !== null && !Array.isArray(error) ? error.code : undefined;
    return typeof code === 'string' ? 'typed' : 'untyped';
  }
  if (text.startsWith(ANSWER_START)) return undefined;
  return /\berror\b/i.test(text) ? 'untyped' : undefined;
}

function parseObject(text: string): Record<string, JsonValue> | undefined {
  try {
    const value = JSON.parse(text) as JsonValue;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
