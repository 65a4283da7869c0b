import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { Message, ModelRequest } from '@keel/core';
import type { ProviderMetadata, ReasoningPart, ToolChoice } from '@keel/core/adapter';

/** What a keel request becomes on the AI SDK's side, besides the request itself. */
export interface CallSettings {
  providerOptions: SharedV3ProviderOptions | undefined;
  headers: Record<string, string> | undefined;
}

/** The AI SDK call options (language model specification v3) for a keel request. */
export function toCallOptions(request: ModelRequest, settings: CallSettings): LanguageModelV3CallOptions {
  const options: LanguageModelV3CallOptions = {
    prompt: toPrompt(request.messages),
    abortSignal: request.signal,
  };
  if (request.tools !== undefined && request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as never,
    }));
    if (request.toolChoice !== undefined) options.toolChoice = toToolChoice(request.toolChoice);
  }
  if (request.outputSchema !== undefined) {
    options.responseFormat = {
      type: 'json',
      name: request.outputSchema.name,
      schema: request.outputSchema.schema as never,
    };
  }
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (settings.providerOptions !== undefined) options.providerOptions = settings.providerOptions;
  if (settings.headers !== undefined) options.headers = settings.headers;
  return options;
}

/**
 * keel's conversation as an AI SDK prompt. Reasoning goes first in its assistant turn, with the provider metadata it
 * came with (a signature, Gemini's thought signature), so the AI SDK provider can send it back; consecutive tool
 * results travel in one tool message.
 */
export function toPrompt(messages: readonly Message[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        // Images and files are AI SDK file parts (images by their `image/*` media type); the AI SDK provider checks
        // what its API takes.
        const content: Extract<LanguageModelV3Prompt[number], { role: 'user' }>['content'] = [
          { type: 'text', text: message.content },
        ];
        for (const part of message.parts ?? []) {
          if ('url' in part) content.push({ type: 'file', data: new URL(part.url), mediaType: 'image/*' });
          else
            content.push({
              type: 'file',
              data: part.data,
              mediaType: part.mediaType,
              ...(part.type === 'file' && part.filename !== undefined ? { filename: part.filename } : {}),
            });
        }
        prompt.push({ role: 'user', content });
        break;
      }
      case 'assistant':
        prompt.push(toAssistantMessage(message));
        break;
      case 'tool': {
        const part: LanguageModelV3ToolResultPart = {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output:
            message.isError === true
              ? { type: 'error-text', value: message.content }
              : { type: 'text', value: message.content },
        };
        const last = prompt[prompt.length - 1];
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

function toAssistantMessage(message: Extract<Message, { role: 'assistant' }>): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
  for (const part of message.reasoning ?? []) content.push(toReasoningPart(part));
  if (message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls ?? []) {
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: toInput(call.arguments),
      ...providerOptionsOf(call.providerMetadata),
    });
  }
  return { role: 'assistant', content };
}

/**
 * A reasoning block as the AI SDK takes it back. A block that came through the AI SDK carries its own provider
 * metadata; one from keel's Anthropic provider gets the shape the AI SDK's Anthropic provider reads (`signature`,
 * `redactedData`), so a conversation can move between the two.
 */
function toReasoningPart(part: ReasoningPart) {
  if (part.type === 'redacted_thinking') {
    return {
      type: 'reasoning' as const,
      text: '',
      providerOptions: part.providerMetadata ?? { anthropic: { redactedData: part.data } },
    };
  }
  const metadata =
    part.providerMetadata ??
    (part.signature === undefined ? undefined : { anthropic: { signature: part.signature } });
  return { type: 'reasoning' as const, text: part.text, ...providerOptionsOf(metadata) };
}

function providerOptionsOf(metadata: ProviderMetadata | undefined): {
  providerOptions?: SharedV3ProviderOptions;
} {
  return metadata === undefined ? {} : { providerOptions: metadata };
}

/**
 * A tool call's input as the prompt takes it: an object. Arguments that are not a JSON object (the model's own
 * malformed output, being corrected) go as `{}`, as on keel's own wires: the tool result that follows says what was
 * wrong.
 */
function toInput(argumentsText: string): unknown {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toToolChoice(choice: ToolChoice): NonNullable<LanguageModelV3CallOptions['toolChoice']> {
  if (typeof choice === 'string') return { type: choice };
  return { type: 'tool', toolName: choice.name };
}
