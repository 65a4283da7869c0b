import type { FinishReason, Message, ToolCall } from '@keel/core';

/** How content is recorded: each text redacted (`redact`), then cut to `maxChars` characters. */
export interface ContentRecording {
  readonly maxChars: number;
  /** Removes secrets: the environment's known keys and the credential patterns (a `Redactor`'s `text`). */
  readonly redact: (text: string) => string;
}

/** One part of a GenAI message, as the conventions' message JSON schemas define it. */
type MessagePart =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; result: unknown };

/** Text as recorded: secrets redacted, then cut to `maxChars` (a cut text ends with `…`). */
export function recordedText(text: string, { maxChars, redact }: ContentRecording): string {
  const redacted = redact(text);
  return redacted.length <= maxChars ? redacted : `${redacted.slice(0, maxChars)}…`;
}

/** JSON text (tool arguments, a result) as recorded: redacted and cut, then parsed back when it still parses. */
export function recordedJson(text: string, recording: ContentRecording): unknown {
  const recorded = recordedText(text, recording);
  try {
    return JSON.parse(recorded) as unknown;
  } catch {
    return recorded;
  }
}

/** `gen_ai.input.messages`: the conversation sent, each text part redacted and cut. */
export function inputMessages(messages: readonly Message[], recording: ContentRecording): string {
  return JSON.stringify(
    messages.map((message) => {
      const parts: MessagePart[] = [];
      if (message.role === 'tool') {
        parts.push({
          type: 'tool_call_response',
          id: message.toolCallId,
          result: recordedJson(message.content, recording),
        });
      } else if (message.content !== '') {
        parts.push({ type: 'text', content: recordedText(message.content, recording) });
      }
      if (message.role === 'assistant') parts.push(...toolCallParts(message.toolCalls ?? [], recording));
      return { role: message.role, parts };
    }),
  );
}

/** `gen_ai.output.messages`: the answer, one assistant message with its finish reason. */
export function outputMessages(
  content: string,
  toolCalls: readonly ToolCall[],
  finishReason: FinishReason | undefined,
  recording: ContentRecording,
): string {
  const parts: MessagePart[] =
    content === '' ? [] : [{ type: 'text', content: recordedText(content, recording) }];
  parts.push(...toolCallParts(toolCalls, recording));
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason ?? 'stop' }]);
}

function toolCallParts(toolCalls: readonly ToolCall[], recording: ContentRecording): MessagePart[] {
  return toolCalls.map((call) => ({
    type: 'tool_call',
    id: call.id,
    name: recording.redact(call.name),
    arguments: recordedJson(call.arguments, recording),
  }));
}
