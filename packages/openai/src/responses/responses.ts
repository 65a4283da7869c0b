import { KeelError, type ModelProvider, type ModelRequest, type ModelResponse } from '@keel/core';
import {
  checkContentSizes,
  rejectUnknownOptions,
  requireOptionsObject,
  type StreamStallWatch,
  watchModelStream,
} from '@keel/core/adapter';
import {
  checkMaxResponseBytes,
  classifyBodyError,
  credentialRedactor,
  malformedResponseError,
  post,
  readJson,
  withRedactedErrors,
} from '@keel/core/http';
import { OPENAI_CONTENT_LIMITS } from '../content.js';
import type { OpenAIOptions } from '../openai.js';
import { validateOptions } from '../validate.js';
import { type ReasoningSummary, toResponsesBody } from './request-body.js';
import { parseResponse } from './response.js';
import { readResponsesStream } from './stream.js';

/** Options of {@link openaiResponses}. */
export interface OpenAIResponsesOptions extends Omit<OpenAIOptions, 'maxTokensField'> {
  /**
   * Sends `store: true`: OpenAI keeps the response (30 days), as background mode needs. With `false` nothing is kept
   * and reasoning items come back encrypted (`include: ['reasoning.encrypted_content']`) to be sent again with the
   * next request. Defaults to false (true when `background` is set).
   */
  store?: boolean;
  /**
   * Background mode (`background: true`, which needs `store: true`): the answer is always streamed, and a stream cut
   * after the response began is resumed with `GET /responses/{id}?stream=true&starting_after=<last event>` up to
   * `maxStreamResumes` times, the deltas already delivered not delivered again. Defaults to false.
   */
  background?: boolean;
  /** In background mode, most times a cut stream is resumed within one `generate`. Defaults to 3. */
  maxStreamResumes?: number;
  /** How much of its reasoning a reasoning model summarises (`reasoning.summary`). Defaults to none (no summary). */
  reasoningSummary?: ReasoningSummary;
  /** The provider's name in errors, events and reports. Defaults to `openai`. */
  provider?: string;
}

// A record over the interface, so that adding an option without listing it here fails to compile.
const KNOWN_OPTIONS = Object.keys({
  apiKey: true,
  env: true,
  baseUrl: true,
  organization: true,
  project: true,
  headers: true,
  contextWindowTokens: true,
  fetch: true,
  strictJsonSchema: true,
  maxResponseBytes: true,
  reasoningEffort: true,
  reasoningSummary: true,
  store: true,
  background: true,
  maxStreamResumes: true,
  provider: true,
} satisfies Record<keyof OpenAIResponsesOptions, true>);

const SUMMARIES: readonly ReasoningSummary[] = ['auto', 'concise', 'detailed'];

/**
 * A model behind OpenAI's Responses API (`POST /responses`), the API the OpenAI Agents SDK uses: function tools,
 * reasoning items kept and sent back (encrypted, with `store: false`), cached and reasoning tokens in usage, errors
 * classified as the Chat Completions provider's are, and background mode with resumable streams. One `generate` is
 * one request (plus, in background mode, the requests that resume its cut stream); keel's policies do the retrying.
 *
 * @example
 *   const model = openaiResponses('gpt-5-mini', { env: process.env, reasoningEffort: 'low' });
 */
export function openaiResponses(model: string, options: OpenAIResponsesOptions = {}): ModelProvider {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `openaiResponses(): ${message}`);
  };
  if (typeof model !== 'string' || model.trim() === '')
    fail('model must be a model name such as "gpt-5-mini"');
  requireOptionsObject(options, {
    where: 'openaiResponses()',
    example: "{ apiKey: '...' } or { env: process.env }",
  });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'openaiResponses()' });
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null))
    fail('env must be an object such as process.env');
  for (const name of ['organization', 'project'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'string') fail(`${name} must be a string`);
  }
  for (const name of ['store', 'background', 'strictJsonSchema'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      fail(`${name} must be true or false`);
  }
  const background = options.background ?? false;
  if (background && options.store === false) fail('background mode needs store: true (or store left unset)');
  const store = options.store ?? background;
  const maxStreamResumes = options.maxStreamResumes ?? 3;
  if (!Number.isInteger(maxStreamResumes) || maxStreamResumes < 0)
    fail(`maxStreamResumes must be an integer of at least 0, got ${String(maxStreamResumes)}`);
  if (options.reasoningSummary !== undefined && !SUMMARIES.includes(options.reasoningSummary))
    fail(
      `reasoningSummary must be one of "auto", "concise", "detailed", got ${JSON.stringify(options.reasoningSummary)}`,
    );
  const apiKey = options.apiKey ?? options.env?.OPENAI_API_KEY;
  // OpenAI's own endpoint needs a key; another server speaking the Responses API (vLLM, a proxy) may not.
  if ((apiKey === undefined || apiKey === '') && options.baseUrl === undefined)
    fail('no API key. Pass { apiKey } or { env: process.env } with OPENAI_API_KEY set');
  const provider = options.provider ?? 'openai';
  const baseUrl = options.baseUrl ?? 'https://api.openai.com/v1';
  validateOptions({ ...options, apiKey, baseUrl, model, provider, maxTokensField: 'max_completion_tokens' });
  const maxResponseBytes = checkMaxResponseBytes(options.maxResponseBytes, 'openaiResponses()');

  const root = baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey !== undefined && apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
  if (options.organization !== undefined) headers['openai-organization'] = options.organization;
  if (options.project !== undefined) headers['openai-project'] = options.project;
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const fetch = options.fetch ?? globalThis.fetch;
  const bodySettings = {
    model,
    strictJsonSchema: options.strictJsonSchema ?? false,
    reasoningEffort: options.reasoningEffort,
    reasoningSummary: options.reasoningSummary,
    store,
    background,
  };
  const redactor = credentialRedactor(apiKey, headers);

  /** Opens a background response's stream again after event `startingAfter`. */
  async function resumeStream(responseId: string, startingAfter: number, signal: AbortSignal) {
    const url = `${root}/responses/${encodeURIComponent(responseId)}?stream=true&starting_after=${startingAfter}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'GET',
        headers: { ...headers, accept: 'text/event-stream' },
        signal,
        redirect: 'manual',
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new KeelError('network.connection', `${provider}: resuming the stream failed: ${String(error)}`, {
        provider,
        cause: error,
      });
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: classified by its status alone.
      }
      throw classifyBodyError(body, provider, response.status);
    }
    if (response.body === null)
      throw malformedResponseError(provider, 'the resumed stream has no body', undefined, 200);
    return response.body;
  }

  async function send(request: ModelRequest, onTextDelta: ((delta: string) => void) | undefined) {
    // Background mode always streams: its stream is what can be resumed.
    const stream = onTextDelta !== undefined || background;
    checkContentSizes(request.messages, OPENAI_CONTENT_LIMITS, provider);
    // A streamed call is cut when it stalls (no first byte, or a silence between chunks): `network.timeout`.
    const stall = stream ? watchModelStream(request, provider) : undefined;
    try {
      return await sendWatched(request, onTextDelta, stream, stall);
    } finally {
      stall?.stop();
    }
  }

  async function sendWatched(
    request: ModelRequest,
    onTextDelta: ((delta: string) => void) | undefined,
    stream: boolean,
    stall: StreamStallWatch | undefined,
  ): Promise<ModelResponse> {
    const signal = stall?.signal ?? request.signal;
    const response = await post({
      url: `${root}/responses`,
      headers: stream ? { ...headers, accept: 'text/event-stream' } : headers,
      body: toResponsesBody(request, bodySettings, stream),
      signal,
      fetch,
      provider,
    });
    const contentType = response.headers.get('content-type') ?? '';
    let result: ModelResponse;
    if (stream && contentType.includes('text/event-stream')) {
      if (response.body === null)
        throw malformedResponseError(provider, 'the event stream has no body', undefined, 200);
      result = await readResponsesStream({
        body: response.body,
        signal,
        provider,
        requestedModel: model,
        onTextDelta,
        onStreamPart: onTextDelta === undefined ? undefined : request.onStreamPart,
        onReceived: stall?.received,
        maxResponseBytes,
        ...(background
          ? {
              resume: (id: string, after: number) => resumeStream(id, after, signal),
              maxResumes: maxStreamResumes,
            }
          : {}),
      });
    } else {
      stall?.stop();
      result = parseResponse(await readJson(response, signal, provider, maxResponseBytes), provider, model);
      if (onTextDelta !== undefined && result.content !== '') onTextDelta(result.content);
    }
    const requestId = response.headers.get('x-request-id');
    if (requestId !== null && requestId !== '') result.requestId = requestId;
    return result;
  }

  const generate = (request: ModelRequest): Promise<ModelResponse> =>
    withRedactedErrors(redactor, request, (onTextDelta) => send(request, onTextDelta));
  return { provider, model, contextWindowTokens: options.contextWindowTokens, generate };
}
