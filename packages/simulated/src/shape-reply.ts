import type { FinishReason, JsonValue } from '@keel/core';
import type { BrainReply, BrainRequest } from './brain.js';
import { estimateTokens, type WireToolCall } from './completion.js';
import type { FaultKind } from './faults.js';
import { argumentsFromSchema } from './schema-values.js';

/** A brain's reply made ready for the wire, with the reply-level fault applied. */
export interface ShapedReply {
  content: string;
  toolCalls: WireToolCall[];
  finishReason: FinishReason;
  /** The fault actually applied: `none` when the scheduled one could not apply, `max_tokens` for a natural cut. */
  fault: FaultKind;
}

const FILLER = 'Let me work through this request step by step before I give the full answer to it.';

/**
 * Turns `reply` into what goes on the wire: deterministic call ids, JSON arguments, one call only when parallel
 * calls are off, then `fault` (`invalid_tool_arguments`, `unknown_tool`, `max_tokens`) applied, and content longer
 * than the request's `max_tokens` cut with finish reason `length`.
 */
export function shapeReply(
  reply: BrainReply,
  request: Omit<BrainRequest, 'index'>,
  options: { fault: FaultKind; requestIndex: number; parallelToolCalls: boolean },
): ShapedReply {
  const callId = (position: number) => `call_sim_${options.requestIndex}_${position}`;
  let toolCalls: WireToolCall[] = (reply.toolCalls ?? []).map((call, position) => ({
    id: call.id ?? callId(position),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  if (!options.parallelToolCalls) toolCalls = toolCalls.slice(0, 1);
  let content = reply.content ?? '';
  let finishReason = reply.finishReason;
  let fault: FaultKind = options.fault;
  const task = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
  const offered = new Set(request.tools.map((tool) => tool.name));

  if (fault === 'invalid_tool_arguments') {
    const first = toolCalls[0] ?? firstToolCall(request, task, callId(0));
    if (first === undefined) fault = 'none';
    else {
      toolCalls = [{ ...first, arguments: broken(first.arguments) }, ...toolCalls.slice(1)];
      finishReason = 'tool_calls';
    }
  } else if (fault === 'unknown_tool') {
    const first = toolCalls[0] ?? {
      id: callId(0),
      name: 'search_web',
      arguments: JSON.stringify({ query: task }),
    };
    let name = toolCalls[0] === undefined ? first.name : `${first.name}_v2`;
    while (offered.has(name)) name = `${name}_v2`;
    toolCalls = [{ ...first, name }, ...toolCalls.slice(1)];
    finishReason = 'tool_calls';
  } else if (fault === 'max_tokens') {
    const full = content === '' ? FILLER : content;
    content = cutAtWord(full, Math.ceil(full.length / 2));
    toolCalls = [];
    finishReason = 'length';
  } else if (
    finishReason === undefined &&
    toolCalls.length === 0 &&
    request.maxOutputTokens !== undefined &&
    estimateTokens(content) > request.maxOutputTokens
  ) {
    content = content.slice(0, request.maxOutputTokens * 4);
    finishReason = 'length';
    fault = 'max_tokens';
  }
  return {
    content,
    toolCalls,
    finishReason: finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    fault,
  };
}

function firstToolCall(
  request: Omit<BrainRequest, 'index'>,
  task: string,
  id: string,
): WireToolCall | undefined {
  const tool = request.tools[0];
  if (tool === undefined) return undefined;
  const args: Record<string, JsonValue> = argumentsFromSchema(tool.inputSchema, task);
  return { id, name: tool.name, arguments: JSON.stringify(args) };
}

/** A strict prefix of the arguments, which no JSON parser accepts. */
function broken(text: string): string {
  const prefix = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  try {
    JSON.parse(prefix);
    return `${prefix}{`;
  } catch {
    return prefix;
  }
}

function cutAtWord(text: string, length: number): string {
  const space = text.lastIndexOf(' ', length);
  return text.slice(0, space > 0 ? space : length);
}
