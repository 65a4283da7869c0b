import { type FinishReason, type Message, redactSecrets, type ToolCall } from '@keel/core';

/** One part of a GenAI message, as the conventions' message JSON schemas define it. */
type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; result: unknown };

/** Text as recorded: secrets redacted (`redactSecrets`), then cut to `maxChars` (a cut text ends with `…`). */
export function recordedText(text: string, maxChars: number): string {
  const redacted = redactSecrets(text);
  return redacted.length <= maxChars ? redacted : `${redacted.slice(0, maxChars)}…`;
}

/** JSON text (tool arguments, a result) as recorded: redacted and cut, then parsed back when it still parses. */
export function recordedJson(text: string, maxChars: number): unknown {
  const recorded = recordedText(text, maxChars);
  try {
    return JSON.parse(recorded) as unknown;
  } catch {
    return recorded;
  }
}

/** `gen_ai.input.messages`: the conversation sent, each text part redacted and cut to `maxChars`. */
export function inputMessages(messages: readonly Message[], maxChars: number): string {
  return JSON.stringify(
    messages.map((message) => {
      const parts: MessagePart[] = [];
      if (message.role === 'tool') {
        parts.push({
          type: 'tool_call_response',
          id: message.toolCallId,
          result: recordedJson(message.content, maxChars),
        });
      } else if (message.content !== '') {
        parts.push({ type: 'text', content: recordedText(message.content, maxChars) });
      }
      if (message.role === 'assistant') parts.push(...toolCallParts(message.toolCalls ?? [], maxChars));
      return { role: message.role, parts };
    }),
  );
}

/** `gen_ai.output.messages`: the answer, one assistant message with its finish reason. */
export function outputMessages(
  content: string,
  toolCalls: readonly ToolCall[],
  finishReason: FinishReason | undefined,
  maxChars: number,
): string {
  const parts: MessagePart[] =
    content === '' ? [] : [{ type: 'text', content: recordedText(content, maxChars) }];
  parts.push(...toolCallParts(toolCalls, maxChars));
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason ?? 'stop' }]);
}

function toolCallParts(toolCalls: readonly ToolCall[], maxChars: number): MessagePart[] {
  return toolCalls.map((call) => ({
    type: 'tool_call',
    id: call.id,
    name: call.name,
    arguments: recordedJson(call.arguments, maxChars),
  }));
}
