import { KeelError, type Message, type ModelRequest } from '@keel/core';
import { checkContentSizes, type JsonSchema, type ReasoningPart, type ToolChoice } from '@keel/core/adapter';
import { placeCacheBreakpoints } from './cache-breakpoints.js';
import { ANTHROPIC_CONTENT_LIMITS, toContentBlock } from './content.js';
import { checkThinkingRequest, type ThinkingSettings } from './thinking.js';

/** Settings of the provider that shape the request body. */
export interface BodySettings {
  model: string;
  provider: string;
  maxOutputTokens: number;
  /** Extended thinking, when on. */
  thinking: ThinkingSettings | undefined;
  /** Marks the stable prefix for the prompt cache (see `placeCacheBreakpoints`). */
  promptCaching: boolean;
}

/** How structured output was asked for: as a forced tool, whose input is the answer. */
export interface OutputTool {
  name: string;
  /** True when the schema was not an object and sits under `value` (Anthropic tool inputs must be objects). */
  wrapped: boolean;
}

type ContentBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
  | { type: 'image' | 'document'; source: Record<string, unknown>; title?: string };

interface WireMessage {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The Messages API request body for `request`. System messages, wherever they are, become the top-level `system`
 * (joined by blank lines), since the API takes no system role in `messages`. With extended thinking on, the body
 * asks for it, assistant turns carry their thinking blocks back, and structured output offers its tool without
 * forcing it (the API refuses a forced tool choice with thinking; an answer given as text is validated all the same).
 */
export function toRequestBody(
  request: ModelRequest,
  settings: BodySettings,
  stream: boolean,
): { body: Record<string, unknown>; outputTool: OutputTool | undefined } {
  const system = request.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n\n');
  checkContentSizes(request.messages, ANTHROPIC_CONTENT_LIMITS, settings.provider);
  const maxTokens = request.maxOutputTokens ?? settings.maxOutputTokens;
  const { thinking } = settings;
  if (thinking !== undefined) checkThinkingRequest(thinking, request, maxTokens, settings.provider);
  const body: Record<string, unknown> = {
    model: settings.model,
    max_tokens: maxTokens,
    messages: toWireMessages(request.messages, thinking !== undefined),
  };
  if (thinking !== undefined) body.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  if (system !== '') body.system = system;
  const tools: Record<string, unknown>[] = (request.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  }));
  let toolChoice =
    tools.length > 0 && request.toolChoice !== undefined ? toWireToolChoice(request.toolChoice) : undefined;
  let outputTool: OutputTool | undefined;
  if (request.outputSchema !== undefined) {
    const { name, schema } = request.outputSchema;
    outputTool = { name: toolName(name), wrapped: schema.type !== 'object' };
    if (tools.some((tool) => tool.name === outputTool!.name)) {
      throw new KeelError(
        'config.invalid',
        `${settings.provider}: the output schema "${name}" has the name of a tool; rename one of them`,
        { provider: settings.provider },
      );
    }
    const forcedOutput = { type: 'tool', name: outputTool.name };
    if (request.toolChoice === 'none' || tools.length === 0) {
      tools.length = 0;
      toolChoice = thinking === undefined ? forcedOutput : undefined;
    } else if (thinking !== undefined) {
      toolChoice = undefined;
    } else if (typeof request.toolChoice !== 'object') {
      // The model may still call tools first, but must end with the output tool rather than with text.
      toolChoice = { type: 'any' };
    }
    tools.push({
      name: outputTool.name,
      description: `Give your final answer by calling this tool exactly once, with the answer as its input.`,
      input_schema: outputTool.wrapped ? wrap(schema) : schema,
    });
  }
  if (tools.length > 0) body.tools = tools;
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (stream) body.stream = true;
  if (settings.promptCaching) placeCacheBreakpoints(body);
  return { body, outputTool };
}

/**
 * Maps keel messages to alternating user and assistant turns. Tool results become `tool_result` blocks in a user
 * turn, and consecutive turns of one role are merged, so parallel tool results travel in one message as the API asks.
 * An assistant message with neither text (whitespace aside) nor tool calls is left out: the API refuses a turn with
 * empty content, and the model said nothing in it; the user turns around it merge. With `thinking`, an assistant
 * message's reasoning blocks open its turn, as the model wrote them.
 */
function toWireMessages(messages: Message[], thinking: boolean): WireMessage[] {
  const turns: { role: 'user' | 'assistant'; blocks: ContentBlock[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(message, thinking);
    if (blocks.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  return turns.map(({ role, blocks }) => {
    const only = blocks.length === 1 ? blocks[0] : undefined;
    return { role, content: only?.type === 'text' ? only.text : blocks };
  });
}

function toBlocks(message: Exclude<Message, { role: 'system' }>, thinking: boolean): ContentBlock[] {
  switch (message.role) {
    case 'user': {
      const blocks: ContentBlock[] =
        message.content === '' && (message.parts?.length ?? 0) > 0
          ? []
          : [{ type: 'text', text: message.content }];
      for (const part of message.parts ?? []) blocks.push(toContentBlock(part) as ContentBlock);
      return blocks;
    }
    case 'assistant': {
      const blocks: ContentBlock[] =
        thinking && message.reasoning !== undefined ? thinkingBlocks(message.reasoning) : [];
      const withText = blocks.length;
      // The API refuses empty and whitespace-only text blocks.
      if (message.content.trim() !== '') blocks.push({ type: 'text', text: message.content });
      // A turn of thinking alone says nothing: left out, as an empty one is.
      if (blocks.length === withText && (message.toolCalls ?? []).length === 0) return [];
      for (const call of message.toolCalls ?? []) {
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toInput(call.arguments) });
      }
      return blocks;
    }
    case 'tool': {
      const block: ContentBlock = {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content,
      };
      if (message.isError === true) block.is_error = true;
      return [block];
    }
  }
}

/**
 * The reasoning blocks Anthropic takes back, unmodified: thinking with its signature, and redacted thinking. Thinking
 * without a signature (another provider's reasoning) is left out, since the API would refuse it.
 */
function thinkingBlocks(reasoning: readonly ReasoningPart[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of reasoning) {
    if (part.type === 'thinking' && typeof part.signature === 'string' && part.signature !== '') {
      blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
    } else if (part.type === 'redacted_thinking' && typeof part.data === 'string') {
      blocks.push({ type: 'redacted_thinking', data: part.data });
    }
  }
  return blocks;
}

/**
 * A tool call's input must be an object on this wire. Arguments that are not a JSON object (the model's own
 * malformed output, being corrected) are sent as `{}`: the tool result that follows says what was wrong.
 */
function toInput(argumentsText: string): unknown {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toWireToolChoice(choice: ToolChoice): Record<string, unknown> {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

/** The output schema's name as a valid tool name. */
function toolName(name: string): string {
  if (TOOL_NAME.test(name)) return name;
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'final_answer' : cleaned;
}

function wrap(schema: JsonSchema): JsonSchema {
  return { type: 'object', properties: { value: schema }, required: ['value'] };
}
