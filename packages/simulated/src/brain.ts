import type { FinishReason, JsonValue, Message } from '@keel/core';
import type { JsonSchema, ToolChoice, ToolDefinition } from '@keel/core/adapter';

/** One chat completion request, as the brain sees it: OpenAI's wire format turned into keel's types. */
export interface BrainRequest {
  /** The model named in the request. */
  model: string;
  /** Position of this request among the requests for `model`, from 0 (the fault schedule's index). */
  index: number;
  /**
   * The conversation. Tool messages carry the name of the tool whose call they answer, and `isError` when their
   * content looks like an error (`{"status":"error", ...}`, an `error` field, or text starting with "Error").
   */
  messages: Message[];
  /** The tools offered; empty when none. */
  tools: ToolDefinition[];
  /** Defaults to `auto`. */
  toolChoice: ToolChoice;
  /** Set when the request asked for JSON (`response_format`); `json_object` gives an object with an `answer`. */
  outputSchema?: { name: string; schema: JsonSchema };
  /** `max_completion_tokens` or `max_tokens`, when set. */
  maxOutputTokens?: number;
  /** The request body as received. */
  body: Record<string, JsonValue>;
}

/** A tool call the brain wants to make. */
export interface BrainToolCall {
  name: string;
  /** An object (serialised as JSON) or the raw argument text, which may deliberately be invalid JSON. */
  arguments: Record<string, JsonValue> | string;
  /** Defaults to a deterministic `call_<request>_<position>`. */
  id?: string;
}

/** What the brain answers. */
export interface BrainReply {
  /** Text of the answer. Defaults to empty. */
  content?: string;
  /** Tool calls, made in parallel. Defaults to none. */
  toolCalls?: BrainToolCall[];
  /**
   * Defaults to `tool_calls` when there are tool calls, else `length` when the content exceeds the request's
   * `max_tokens` (the server then cuts it), else `stop`.
   */
  finishReason?: FinishReason;
}

/**
 * Decides what the simulated model answers. Pure functions of the request keep the simulation deterministic; a test
 * can script one to play any conversation.
 */
export type Brain = (request: BrainRequest) => BrainReply | Promise<BrainReply>;
