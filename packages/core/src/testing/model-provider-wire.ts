import type { ServerSentEvent } from './http-test-server.js';

/** The failures {@link ModelProviderWire.error} writes a body for. */
export type WireErrorKind = 'rate_limit' | 'server' | 'auth';

/**
 * What a wire format's bodies look like, for {@link modelProviderContract}: the suite owns the cases (aborts, cut-off
 * bodies, statuses, keys), the wire says how an answer, an error and a stream are written in it.
 */
export interface ModelProviderWire {
  /** A successful, non-streamed answer whose text is `text` and whose turn ends normally. */
  answer(text: string): unknown;
  /** An error body of `kind` whose message is `message` (the suite puts a key in it to check redaction). */
  error(kind: WireErrorKind, message: string): unknown;
  /** The events of a streamed answer. */
  stream: {
    /** The events before the first text. */
    start: readonly ServerSentEvent[];
    /** One piece of text, delivered to `onTextDelta` as it is. */
    text(text: string): ServerSentEvent;
    /** The events that end the answer normally (finish reason, usage, terminator). */
    end: readonly ServerSentEvent[];
    /** An event that carries `body` (made by {@link ModelProviderWire.error}) as an error mid-stream. */
    error(body: unknown): ServerSentEvent;
    /**
     * The events of a stream that ends cleanly with no answer in it: no choice or content block, no text, no finish
     * reason (what a proxy or an overloaded server sometimes sends).
     */
    empty: readonly ServerSentEvent[];
    /**
     * The events of a whole streamed answer: `text` in pieces, then one tool call (`id`, `name`, its arguments JSON
     * in pieces) and the end of a turn that asks for tools.
     */
    toolAnswer(
      text: readonly string[],
      call: { id: string; name: string; arguments: readonly string[] },
    ): ServerSentEvent[];
  };
}

const openaiChunk = (
  delta: Record<string, unknown>,
  finishReason: string | null = null,
): ServerSentEvent => ({
  data: { id: 'chatcmpl-contract', model: 'm', choices: [{ index: 0, delta, finish_reason: finishReason }] },
});

const OPENAI_ERROR_TYPES: Record<WireErrorKind, { type: string; code: string | null }> = {
  rate_limit: { type: 'requests', code: 'rate_limit_exceeded' },
  server: { type: 'server_error', code: null },
  auth: { type: 'invalid_request_error', code: 'invalid_api_key' },
};

/**
 * The OpenAI Chat Completions wire (`/v1/chat/completions`), as OpenAI and the compatible servers (vLLM, Ollama,
 * Groq, OpenRouter) speak it: a `chat.completion` body, `{ error: { message, type, code } }` errors, and a stream of
 * `chat.completion.chunk` events ended by `data: [DONE]`.
 */
export const openaiChatWire: ModelProviderWire = {
  answer: (text) => ({
    id: 'chatcmpl-contract',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
  error: (kind, message) => ({ error: { message, param: null, ...OPENAI_ERROR_TYPES[kind] } }),
  stream: {
    start: [openaiChunk({ role: 'assistant', content: '' })],
    text: (text) => openaiChunk({ content: text }),
    end: [
      openaiChunk({}, 'stop'),
      {
        data: {
          id: 'chatcmpl-contract',
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
      },
      { data: '[DONE]' },
    ],
    error: (body) => ({ data: body }),
    empty: [{ data: { id: 'chatcmpl-contract', model: 'm', choices: [] } }, { data: '[DONE]' }],
    toolAnswer: (text, call) => [
      openaiChunk({ role: 'assistant', content: '' }),
      ...text.map((piece) => openaiChunk({ content: piece })),
      openaiChunk({
        tool_calls: [
          { index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
      ...call.arguments.map((piece) =>
        openaiChunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
      ),
      openaiChunk({}, 'tool_calls'),
      {
        data: {
          id: 'chatcmpl-contract',
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
      },
      { data: '[DONE]' },
    ],
  },
};

const anthropicEvent = (type: string, fields: Record<string, unknown> = {}): ServerSentEvent => ({
  event: type,
  data: { type, ...fields },
});

const ANTHROPIC_ERROR_TYPES: Record<WireErrorKind, string> = {
  rate_limit: 'rate_limit_error',
  server: 'api_error',
  auth: 'authentication_error',
};

/**
 * The Anthropic Messages wire (`/v1/messages`): a `message` body with content blocks, `{ type: 'error', error }`
 * errors, and a stream of named events from `message_start` to `message_stop`.
 */
export const anthropicMessagesWire: ModelProviderWire = {
  answer: (text) => ({
    id: 'msg_contract',
    type: 'message',
    role: 'assistant',
    model: 'c',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }),
  error: (kind, message) => ({ type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[kind], message } }),
  stream: {
    start: [
      anthropicEvent('message_start', {
        message: {
          id: 'msg_contract',
          type: 'message',
          role: 'assistant',
          model: 'c',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      }),
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ],
    text: (text) => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    end: [
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 1 },
      }),
      anthropicEvent('message_stop'),
    ],
    error: (body) => ({ event: 'error', data: body }),
    empty: [
      anthropicEvent('message_start', {
        message: {
          id: 'msg_contract',
          type: 'message',
          role: 'assistant',
          model: 'c',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 0 },
        },
      }),
      anthropicEvent('message_stop'),
    ],
    toolAnswer: (text, call) => [
      ...anthropicMessagesWire.stream.start,
      ...text.map((piece) => anthropicMessagesWire.stream.text(piece)),
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
      ...call.arguments.map((piece) =>
        anthropicEvent('content_block_delta', {
          index: 1,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      ),
      anthropicEvent('content_block_stop', { index: 1 }),
      anthropicEvent('message_delta', {
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 1 },
      }),
      anthropicEvent('message_stop'),
    ],
  },
};
