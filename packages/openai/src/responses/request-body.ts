import type { Message, ModelRequest } from '@keel/core';
import type { ProviderMetadata, ReasoningPart, ToolChoice } from '@keel/core/adapter';
import { toResponsesContent } from '../content.js';
import type { ReasoningEffort } from '../request-body.js';

/** How much of its reasoning a model summarises (`reasoning.summary`). */
export type ReasoningSummary = 'auto' | 'concise' | 'detailed';

/** Settings of the provider that shape a Responses API request body. */
export interface ResponsesBodySettings {
  model: string;
  strictJsonSchema: boolean;
  reasoningEffort: ReasoningEffort | undefined;
  reasoningSummary: ReasoningSummary | undefined;
  /** `store: true` keeps the response on OpenAI's side (background mode needs it). */
  store: boolean;
  background: boolean;
}

type InputItem = Record<string, unknown>;

/** What the provider keeps of a reasoning item under `providerMetadata.openai`, to send it back. */
export interface ReasoningItemMetadata {
  itemId: string;
  encryptedContent?: string;
  /** The summary's parts, as the model wrote them (the part's `text` joins them). */
  summary: string[];
}

/**
 * The Responses API request body for `request`. System messages stay `system` input messages in their place (the API
 * takes them in `input`); assistant turns become their reasoning items (kept from the
 * answer, encrypted content included, so that a reasoning model goes on from its own reasoning with `store: false`),
 * then an assistant message, then `function_call` items; tool results become `function_call_output` items.
 * Reasoning is always asked back encrypted (`include: ['reasoning.encrypted_content']`) when nothing is stored.
 */
export function toResponsesBody(
  request: ModelRequest,
  settings: ResponsesBodySettings,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: settings.model,
    input: request.messages.flatMap(toInputItems),
    store: settings.store,
  };
  if (!settings.store) body.include = ['reasoning.encrypted_content'];
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    }));
    if (request.toolChoice !== undefined) body.tool_choice = toWireToolChoice(request.toolChoice);
  }
  if (request.outputSchema !== undefined) {
    body.text = {
      format: {
        type: 'json_schema',
        name: request.outputSchema.name,
        schema: request.outputSchema.schema,
        strict: settings.strictJsonSchema,
      },
    };
  }
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (settings.reasoningEffort !== undefined || settings.reasoningSummary !== undefined) {
    const reasoning: Record<string, unknown> = {};
    if (settings.reasoningEffort !== undefined) reasoning.effort = settings.reasoningEffort;
    if (settings.reasoningSummary !== undefined) reasoning.summary = settings.reasoningSummary;
    body.reasoning = reasoning;
  }
  if (settings.background) body.background = true;
  if (stream) body.stream = true;
  return body;
}

function toInputItems(message: Message): InputItem[] {
  switch (message.role) {
    case 'system':
      return [{ role: message.role, content: message.content }];
    case 'user':
      if (message.parts !== undefined && message.parts.length > 0)
        return [{ role: 'user', content: toResponsesContent(message.content, message.parts) }];
      return [{ role: 'user', content: message.content }];
    case 'assistant': {
      const items: InputItem[] = (message.reasoning ?? []).flatMap(toReasoningItem);
      if (message.content !== '') items.push({ role: 'assistant', content: message.content });
      for (const call of message.toolCalls ?? []) {
        items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
      }
      return items;
    }
    case 'tool':
      return [{ type: 'function_call_output', call_id: message.toolCallId, output: message.content }];
  }
}

/**
 * A reasoning item as the API gave it, from what the provider kept. Reasoning from another provider (no item id) is
 * left out: the API would refuse an item it did not make.
 */
function toReasoningItem(part: ReasoningPart): InputItem[] {
  const kept = reasoningMetadataOf(part.providerMetadata);
  if (kept === undefined) return [];
  const item: InputItem = {
    type: 'reasoning',
    id: kept.itemId,
    summary: kept.summary.map((text) => ({ type: 'summary_text', text })),
  };
  if (kept.encryptedContent !== undefined) item.encrypted_content = kept.encryptedContent;
  return [item];
}

/** The reasoning item a part carries, when this provider made it. */
export function reasoningMetadataOf(
  metadata: ProviderMetadata | undefined,
): ReasoningItemMetadata | undefined {
  const openai = metadata?.openai;
  if (openai === undefined || typeof openai.itemId !== 'string' || openai.itemId === '') return undefined;
  const summary = Array.isArray(openai.summary)
    ? openai.summary.filter((text): text is string => typeof text === 'string')
    : [];
  const kept: ReasoningItemMetadata = { itemId: openai.itemId, summary };
  if (typeof openai.encryptedContent === 'string') kept.encryptedContent = openai.encryptedContent;
  return kept;
}

function toWireToolChoice(choice: ToolChoice): unknown {
  if (typeof choice === 'string') return choice;
  return { type: 'function', name: choice.name };
}
