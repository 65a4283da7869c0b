import { KeelError, type ModelProvider, type ModelRequest, type ModelResponse } from '@keel/core';
import {
  rejectUnknownOptions,
  requireOptionsObject,
  type StreamStallWatch,
  watchModelStream,
} from '@keel/core/adapter';
import {
  checkMaxResponseBytes,
  credentialRedactor,
  malformedResponseError,
  post,
  type RateLimitSnapshot,
  rateLimitFromHeaders,
  readJson,
  withRedactedErrors,
} from '@keel/core/http';
import { continuedBody, joinAnswers, pausedTooOften } from './pause-turn.js';
import { type OutputTool, toRequestBody } from './request-body.js';
import { type Answer, parseMessage, stopReasonError, toModelResponse } from './response.js';
import { readMessageStream } from './stream.js';
import { checkThinking, type ThinkingOptions } from './thinking.js';

/** Options of {@link anthropic}. */
export interface AnthropicOptions {
  /** Sent as `x-api-key`. Required unless `env` holds `ANTHROPIC_API_KEY` or `headers` carry the credentials. */
  apiKey?: string;
  /**
   * Where to read `ANTHROPIC_API_KEY` when `apiKey` is not given, such as `process.env`. keel never reads the process
   * environment on its own. Defaults to none.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** The API's origin, the part before `/v1/messages`. Defaults to `https://api.anthropic.com`. */
  baseUrl?: string;
  /** Extra headers on every request (they override keel's own), such as `anthropic-beta`. Defaults to none. */
  headers?: Record<string, string>;
  /** `max_tokens` when the request sets no `maxOutputTokens`; the API requires one. Defaults to 4096. */
  maxOutputTokens?: number;
  /** The model's context window in tokens, when known. Defaults to undefined (unknown). */
  contextWindowTokens?: number;
  /** The provider's name in errors, events and reports. Defaults to `anthropic`. */
  provider?: string;
  /**
   * Sent as `anthropic-version`: the API version date, in the form `YYYY-MM-DD` (such as `2023-06-01`); newer
   * behaviour behind `anthropic-beta` flags goes in `headers`. Defaults to `2023-06-01`.
   */
  version?: string;
  /** The fetch to call. Defaults to the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /**
   * The largest successful response read, in bytes, whole body or event stream; a larger one fails with
   * `provider.response_too_large` (not retryable) and is read no further. Defaults to 67_108_864 (64 MiB).
   */
  maxResponseBytes?: number;
  /**
   * Extended thinking: Claude reasons before it answers, within `budgetTokens` (see {@link ThinkingOptions}). Its
   * thinking blocks, signatures included, stay in the conversation (`ModelResponse.reasoning`, then the assistant
   * message) and go back to the API unmodified, first in their turn, as it requires with tool use. Thinking tokens
   * are part of `usage.outputTokens` (the API counts them apart nowhere). With thinking on, the API accepts neither a
   * forced tool choice nor a temperature other than 1 (such requests fail with `config.invalid`), so structured
   * output offers its tool without forcing it. Defaults to none (no thinking).
   */
  thinking?: ThinkingOptions;
  /**
   * How many times one answer paused by the API (`stop_reason: pause_turn`, a long server-tool turn) is continued:
   * each continuation sends the turn back as it came and is one more upstream request, reported through
   * `onContinuationRequest`. A turn still paused after that fails with `provider.max_tokens`. Defaults to 3.
   */
  maxPauseContinuations?: number;
  /**
   * Prompt caching: each request marks its stable prefix (the tools, the system prompt, the conversation up to the
   * previous and the last user turn; at most 4 breakpoints) with `cache_control: { type: 'ephemeral' }`, so that the
   * next request of the run reads it from Anthropic's cache (`usage.cachedInputTokens`, billed at a tenth of the
   * input price; writing costs 1.25 times, `usage.cacheWriteInputTokens`). `false` sends no breakpoint. Defaults to
   * true.
   */
  promptCaching?: boolean;
}

/** An `anthropic-version` value: a date such as `2023-06-01` (also what keeps a header break out of it). */
const API_VERSION = /^\d{4}-\d{2}-\d{2}$/;

// A record over the interface, so that adding an option without listing it here fails to compile.
const KNOWN_OPTIONS = Object.keys({
  apiKey: true,
  env: true,
  baseUrl: true,
  headers: true,
  maxOutputTokens: true,
  contextWindowTokens: true,
  provider: true,
  version: true,
  fetch: true,
  maxResponseBytes: true,
  thinking: true,
  maxPauseContinuations: true,
  promptCaching: true,
} satisfies Record<keyof AnthropicOptions, true>);

/**
 * A model behind Anthropic's Messages API. One `generate` is one HTTP request; keel's policies do the retrying.
 *
 * Structured output (`request.outputSchema`) is asked for with a forced tool named after the schema: its input is
 * the answer, returned as `content` (JSON text) with finish reason `stop`. A schema whose root is not an object is
 * wrapped as `{ value: schema }` and unwrapped again (then its JSON is not streamed as text deltas).
 *
 * @example
 *   const model = anthropic('claude-haiku-4-5', { env: process.env });
 */
export function anthropic(model: string, options: AnthropicOptions = {}): ModelProvider {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `anthropic(): ${message}`);
  };
  if (typeof model !== 'string' || model.trim() === '')
    fail('model must be a model name such as "claude-haiku-4-5"');
  requireOptionsObject(options, {
    where: 'anthropic()',
    example: "{ apiKey: '...' } or { env: process.env }",
  });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'anthropic()' });
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null))
    fail('env must be an object such as process.env');
  const provider = options.provider ?? 'anthropic';
  if (typeof provider !== 'string' || provider.trim() === '') fail('provider must be a non-empty name');
  const baseUrl = options.baseUrl ?? 'https://api.anthropic.com';
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    fail(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (url !== undefined && url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`baseUrl must use http or https, got ${url.protocol}`);
  }
  const extraHeaders = lowerCaseKeys(options.headers ?? {}, fail);
  const apiKey = options.apiKey ?? options.env?.ANTHROPIC_API_KEY;
  if (apiKey !== undefined && typeof apiKey !== 'string') fail('apiKey must be a string');
  if (
    (apiKey === undefined || apiKey === '') &&
    !('x-api-key' in extraHeaders || 'authorization' in extraHeaders)
  ) {
    fail('no API key. Pass { apiKey } or { env: process.env } with ANTHROPIC_API_KEY set');
  }
  const maxOutputTokens = options.maxOutputTokens ?? 4096;
  if (!Number.isInteger(maxOutputTokens) || maxOutputTokens <= 0)
    fail('maxOutputTokens must be a positive integer');
  const window = options.contextWindowTokens;
  if (window !== undefined && (!Number.isInteger(window) || window <= 0)) {
    fail('contextWindowTokens must be a positive integer');
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') fail('fetch must be a function');
  const version = options.version ?? '2023-06-01';
  if (typeof version !== 'string' || !API_VERSION.test(version)) {
    fail(
      `version must be an Anthropic API version date such as "2023-06-01", got ${JSON.stringify(version)}`,
    );
  }

  const maxResponseBytes = checkMaxResponseBytes(options.maxResponseBytes, 'anthropic()');
  const thinking = checkThinking(options.thinking, maxOutputTokens, extraHeaders, fail);
  const maxPauseContinuations = options.maxPauseContinuations ?? 3;
  if (!Number.isInteger(maxPauseContinuations) || maxPauseContinuations < 0)
    fail(`maxPauseContinuations must be an integer of at least 0, got ${String(maxPauseContinuations)}`);

  const endpoint = `${baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const headers: Record<string, string> = { accept: 'application/json', 'anthropic-version': version };
  if (apiKey !== undefined && apiKey !== '') headers['x-api-key'] = apiKey;
  Object.assign(headers, extraHeaders);
  const fetch = options.fetch ?? globalThis.fetch;
  const promptCaching = options.promptCaching ?? true;
  if (typeof promptCaching !== 'boolean')
    fail(`promptCaching must be true or false, got ${String(promptCaching)}`);
  const settings = { model, provider, maxOutputTokens, thinking, promptCaching };
  // Every error leaves without the key and credential headers, whatever the server echoed.
  const redactor = credentialRedactor(apiKey, headers);

  /** One request: its answer, whether it streamed, and its request id. */
  async function exchange(
    body: Record<string, unknown>,
    request: ModelRequest,
    outputTool: OutputTool | undefined,
    onTextDelta: ((delta: string) => void) | undefined,
  ): Promise<{ answer: Answer; streamed: boolean; requestId: string | null; rateLimit?: RateLimitSnapshot }> {
    // A streamed call is cut when it stalls (no first byte, or a silence between chunks): `network.timeout`.
    const stall = onTextDelta === undefined ? undefined : watchModelStream(request, provider);
    try {
      return await exchangeWatched(
        body,
        stall?.signal ?? request.signal,
        outputTool,
        onTextDelta,
        stall,
        request.onStreamPart,
      );
    } finally {
      stall?.stop();
    }
  }

  async function exchangeWatched(
    body: Record<string, unknown>,
    signal: AbortSignal,
    outputTool: OutputTool | undefined,
    onTextDelta: ((delta: string) => void) | undefined,
    stall: StreamStallWatch | undefined,
    onStreamPart: ModelRequest['onStreamPart'],
  ): Promise<{ answer: Answer; streamed: boolean; requestId: string | null; rateLimit?: RateLimitSnapshot }> {
    const response = await post({
      url: endpoint,
      headers: onTextDelta !== undefined ? { ...headers, accept: 'text/event-stream' } : headers,
      body,
      signal,
      fetch,
      provider,
    });
    const requestId = response.headers.get('request-id');
    const rateLimit = rateLimitFromHeaders(response.headers);
    const contentType = response.headers.get('content-type') ?? '';
    if (onTextDelta === undefined || !contentType.includes('text/event-stream')) {
      stall?.stop();
      const answer = parseMessage(
        await readJson(response, signal, provider, maxResponseBytes),
        provider,
        model,
      );
      return { answer, streamed: false, requestId, rateLimit };
    }
    if (response.body === null)
      throw malformedResponseError(provider, 'the event stream has no body', undefined, 200);
    const answer = await readMessageStream({
      body: response.body,
      signal,
      provider,
      requestedModel: model,
      outputTool,
      onTextDelta,
      onStreamPart,
      maxResponseBytes,
      onReceived: stall?.received,
    });
    return { answer, streamed: true, requestId, rateLimit };
  }

  async function send(
    request: ModelRequest,
    onTextDelta: ((delta: string) => void) | undefined,
  ): Promise<ModelResponse> {
    const { body, outputTool } = toRequestBody(request, settings, onTextDelta !== undefined);
    let last = await exchange(body, request, outputTool, onTextDelta);
    let { answer, streamed } = last;
    for (let continuations = 0; answer.stopReason === 'pause_turn'; continuations++) {
      if (continuations >= maxPauseContinuations) throw pausedTooOften(answer, continuations, provider);
      request.onContinuationRequest?.();
      last = await exchange(continuedBody(body, answer.content), request, outputTool, onTextDelta);
      answer = joinAnswers(answer, last.answer);
      streamed ||= last.streamed;
    }
    const failure = stopReasonError(answer, provider);
    if (failure !== undefined) throw failure;
    const result = toModelResponse(answer, outputTool);
    // A proxy that ignores `stream: true` answers in one piece: deliver its text as a single delta.
    if (!streamed && onTextDelta !== undefined && result.content !== '') onTextDelta(result.content);
    if (last.requestId !== null && last.requestId !== '') result.requestId = last.requestId;
    if (last.rateLimit !== undefined) result.rateLimit = last.rateLimit;
    return result;
  }

  const generate = (request: ModelRequest): Promise<ModelResponse> =>
    withRedactedErrors(redactor, request, (onTextDelta) => send(request, onTextDelta));
  return { provider, model, contextWindowTokens: window, generate };
}

function lowerCaseKeys(
  headers: Record<string, string>,
  fail: (message: string) => never,
): Record<string, string> {
  if (typeof headers !== 'object' || headers === null) fail('headers must be an object of strings');
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') fail(`header ${name} must be a string`);
    result[name.toLowerCase()] = value;
  }
  return result;
}
