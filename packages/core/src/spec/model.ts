import type { JsonValue } from '../errors/keel-error.js';
import type { RateLimitSnapshot } from '../errors/rate-limit-headers.js';

/** A JSON Schema object, as sent to the model. */
export type JsonSchema = { [key: string]: JsonValue };

/**
 * Data a provider attaches to a part of an answer and needs back, unchanged, when the part is sent again: JSON keyed
 * by provider, as the Vercel AI SDK's `providerMetadata` (such as Gemini's `{ google: { thoughtSignature } }`).
 * keel stores it with the conversation and never reads it.
 */
export type ProviderMetadata = { [provider: string]: { [key: string]: JsonValue } };

/** A tool call as the model made it. `arguments` is the raw JSON text, parsed (and validated) by the run loop. */
export interface ToolCall {
  /** The model's own id for the call (used to pair results; never used as an idempotency key). */
  id: string;
  name: string;
  arguments: string;
  /** What the provider needs back with the call (see {@link ProviderMetadata}). Defaults to none. */
  providerMetadata?: ProviderMetadata;
}

/**
 * A block of a model's reasoning, kept with the assistant message it came with, in the model's order. Providers that
 * must see reasoning again send these blocks back unmodified (Anthropic's extended thinking: every thinking block of
 * the turn, signature included, before its text and tool calls, or the API refuses the tool results); others leave
 * them out.
 *
 * - `thinking`: reasoning text (Anthropic's summarised thinking, or any model's reasoning text through the AI SDK),
 *   with the `signature` the provider checks when it gets the block back. A block without a signature is never sent
 *   to Anthropic (the API would refuse it).
 * - `redacted_thinking`: reasoning the provider encrypted (`data`), sent back as it came.
 */
export type ReasoningPart =
  | { type: 'thinking'; text: string; signature?: string; providerMetadata?: ProviderMetadata }
  | { type: 'redacted_thinking'; data: string; providerMetadata?: ProviderMetadata };

/**
 * An image or a file a user message carries beside its text, as bytes (base64 `data` with its `mediaType`) or, for an
 * image, by URL (the provider fetches it). Providers send images as images, PDFs as documents, and text files
 * (`text/*`, `application/json`) as text; each checks sizes against its API's limits before sending
 * (`config.invalid`, nothing sent).
 */
export type ContentPart =
  | { type: 'image'; url: string }
  | { type: 'image'; data: string; mediaType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' }
  | { type: 'file'; data: string; mediaType: string; filename?: string };

/** One message of a conversation. */
export type Message =
  | { role: 'system'; content: string }
  | {
      role: 'user';
      content: string;
      /** Images and files sent after the text, in order (see {@link ContentPart}). Defaults to none. */
      parts?: ContentPart[];
    }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; reasoning?: ReasoningPart[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError?: boolean };

/** A tool as described to the model. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** Whether and which tool the model must call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** Why the model stopped. `length` means it hit its output token limit. */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** Tokens spent by one or more model calls. */
export interface Usage {
  inputTokens: number;
  /** Every token the model wrote, its reasoning included. */
  outputTokens: number;
  /**
   * Of `outputTokens`, those the model spent reasoning, when the provider counts them apart (OpenAI's
   * `completion_tokens_details.reasoning_tokens`, the AI SDK's `outputTokens.reasoning`). Absent when it does not:
   * Anthropic reports no separate count, its thinking tokens are inside `outputTokens`.
   */
  reasoningTokens?: number;
  /** Of `inputTokens`, those read from the provider's prompt cache, when it reports them. */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the provider's prompt cache (Anthropic's cache_creation_input_tokens). */
  cacheWriteInputTokens?: number;
}

/** One request to a model. */
export interface ModelRequest {
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /**
   * Ask for JSON output matching this schema; the answer comes back as JSON text in `content`. Providers without a
   * native mode emulate it (the Anthropic provider forces a tool whose input is the answer).
   */
  outputSchema?: { name: string; schema: JsonSchema };
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * Aborted on cancellation or timeout; a provider must stop its HTTP request at once. The run loop makes it on first
   * read, through an accessor on the request's prototype, so `{ ...request }` does not copy it: a provider that
   * forwards a request copies the signal by name (`{ ...request, signal: request.signal }`).
   */
  signal: AbortSignal;
  /**
   * Called by a provider just before each further upstream request it sends for this call, when its wire needs more
   * than one to finish an answer (Anthropic's `pause_turn` continuations), so that the run's report counts every
   * request the provider received. Defaults to none.
   */
  onContinuationRequest?: () => void;
  /**
   * When set, the provider streams and calls this with each text delta as it arrives. When the call breaks after a
   * delta was delivered, the run loop retries it (unless the agent's `streamRecovery` is false) and passes on only
   * the new answer's text beyond what the caller has (see the `stream-recovered` event).
   */
  onTextDelta?: (delta: string) => void;
  /**
   * When set (only ever together with `onTextDelta`), a streaming provider also calls this with the parts of the
   * answer that are not its text, as they arrive: reasoning deltas and each tool call's start, argument pieces and
   * end (see {@link ModelStreamPart}). Purely informative: the response still carries everything, and a provider that
   * does not stream these parts may never call it. An error it throws is rethrown as it is, as `onTextDelta`'s is.
   * Defaults to none.
   */
  onStreamPart?: (part: ModelStreamPart) => void;
  /**
   * For a streamed call (`onTextDelta` set): the longest wait from sending the request to the first byte of the
   * answer, in milliseconds, then `network.timeout` with `data.stalled: 'first_byte'`. The run loop sets it from the
   * agent's `streamFirstByteTimeoutMs`. Defaults to 30_000 (`@keel/core/http`'s `DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS`).
   */
  streamFirstByteTimeoutMs?: number;
  /**
   * For a streamed call: the longest silence between two pieces of the answer, in milliseconds, then
   * `network.timeout` with `data.stalled: 'idle'`. The run loop sets it from the agent's `streamIdleTimeoutMs`.
   * Defaults to 15_000 (`DEFAULT_STREAM_IDLE_TIMEOUT_MS`).
   */
  streamIdleTimeoutMs?: number;
}

/**
 * A streamed part of a model's answer other than its text, handed to `ModelRequest.onStreamPart`. `index` is the
 * call's position among the answer's tool calls (0 first), as the final `toolCalls` array orders them.
 *
 * - `reasoning-delta`: a piece of the model's reasoning text (Anthropic thinking, OpenAI-compatible
 *   `reasoning_content`, the AI SDK's reasoning).
 * - `tool-call-start`: the model began a tool call (its id and name are known).
 * - `tool-call-delta`: a piece of the call's arguments' JSON text.
 * - `tool-call-end`: the call's arguments are complete (`arguments` is the whole JSON text). A call whose answer
 *   breaks before this part never ran and never will from this answer.
 */
export type ModelStreamPart =
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'tool-call-start'; index: number; toolCallId: string; toolName: string }
  | { type: 'tool-call-delta'; index: number; toolCallId: string; delta: string }
  | { type: 'tool-call-end'; index: number; toolCallId: string; toolName: string; arguments: string };

/** A model's answer. */
export interface ModelResponse {
  content: string;
  toolCalls: ToolCall[];
  /** The model's reasoning blocks, in its order, when it returned any; kept in the conversation with the answer. */
  reasoning?: ReasoningPart[];
  finishReason: FinishReason;
  usage: Usage;
  /** The model that answered, as the provider reported it. */
  model: string;
  /** The upstream request's id (`x-request-id`, `request-id`), when the provider sent one: what its support asks for. */
  requestId?: string;
  /** What the provider's rate-limit headers said (`rateLimitFromHeaders`), when it sent any: the pace governor reads it. */
  rateLimit?: RateLimitSnapshot;
}

/**
 * A model behind some API. One `generate` call sends exactly one upstream request, unless the wire needs more to
 * finish one answer (each of those is reported through `onContinuationRequest`): providers never retry on their own
 * (keel's retry policy does, within one budget), and every failure is thrown as a classified `KeelError`.
 */
export interface ModelProvider {
  /** The provider's name, such as `openai` or `anthropic`. */
  readonly provider: string;
  /** The model's name, such as `gpt-4.1-mini`. */
  readonly model: string;
  /** The model's context window in tokens, when known; fallback on context overflow prefers larger windows. */
  readonly contextWindowTokens?: number;
  generate(request: ModelRequest): Promise<ModelResponse>;
}
