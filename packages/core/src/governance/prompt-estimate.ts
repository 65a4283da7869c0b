import type { Message, ToolDefinition } from '../spec/model.js';

/**
 * Characters per token assumed by {@link estimatePromptTokens}. English text runs about 4 characters per token with
 * OpenAI's and Anthropic's tokenizers; 3 overcounts it, so that a reservation seldom falls short of the actual input.
 */
export const CHARACTERS_PER_TOKEN = 3;

/**
 * The input tokens a request will likely count, estimated from its text: every message's content, tool calls and
 * reasoning text, and the tool definitions, at {@link CHARACTERS_PER_TOKEN}, plus 4 tokens per message for the wire's
 * framing. An estimate (keel carries no tokenizer): what a budget reserves before the call; the settlement after it
 * uses the provider's count.
 */
export function estimatePromptTokens(
  messages: readonly Message[],
  tools: readonly ToolDefinition[] | undefined,
): number {
  let characters = 0;
  for (const message of messages) {
    characters += message.content.length;
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) characters += call.name.length + call.arguments.length;
      for (const part of message.reasoning ?? [])
        characters += part.type === 'thinking' ? part.text.length : part.data.length;
    }
  }
  if (tools !== undefined) {
    for (const tool of tools)
      characters += tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length;
  }
  return Math.ceil(characters / CHARACTERS_PER_TOKEN) + 4 * messages.length;
}
