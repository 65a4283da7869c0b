import { KeelError, type ModelProvider, type ModelRequest, type ModelResponse } from '@keel/core';
import {
  checkContentSizes,
  rejectUnknownOptions,
  requireOptionsObject,
  watchModelStream,
} from '@keel/core/adapter';
import {
  checkMaxResponseBytes,
  credentialRedactor,
  malformedResponseError,
  post,
  rateLimitFromHeaders,
  readJson,
  withRedactedErrors,
} from '@keel/core/http';
import { OPENAI_CONTENT_LIMITS } from './content.js';
import { type MaxTokensField, type ReasoningEffort, toRequestBody } from './request-body.js';
import { parseCompletion } from './response.js';
import { readCompletionStream } from './stream.js';
import { validateOptions } from './validate.js';

/** Options shared by {@link openai} and {@link openaiCompatible}. */
export interface OpenAICommonOptions {
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Extra headers on every request (they override keel's own). Defaults to none. */
  headers?: Record<string, string>;
  /** The model's context window in tokens, when known. Defaults to undefined (unknown). */
  contextWindowTokens?: number;
  /** The fetch to call. Defaults to the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /**
   * The body field that carries `maxOutputTokens`. Defaults to `max_completion_tokens` for {@link openai} and to
   * `max_tokens` for {@link openaiCompatible} (the field Ollama, vLLM and older servers read).
   */
  maxTokensField?: MaxTokensField;
  /**
   * Sends `strict: true` with `response_format.json_schema`. Strict mode needs a schema in OpenAI's strict subset
   * (every property required, `additionalProperties: false`). Defaults to false.
   */
  strictJsonSchema?: boolean;
  /**
   * The largest successful response read, in bytes, whole body or event stream; a larger one fails with
   * `provider.response_too_large` (not retryable) and is read no further. Defaults to 67_108_864 (64 MiB).
   */
  maxResponseBytes?: number;
  /**
   * How hard a reasoning model (o-series, gpt-5) thinks before it answers, sent as `reasoning_effort`: more effort,
   * more reasoning tokens (counted in `usage.reasoningTokens`) and a slower answer. Other models refuse the field.
   * Defaults to none (the model's own default).
   */
  reasoningEffort?: ReasoningEffort;
}

/** Options of {@link openai}. */
export interface OpenAIOptions extends OpenAICommonOptions {
  /**
   * Where to read `OPENAI_API_KEY` when `apiKey` is not given, such as `process.env`. keel never reads the process
   * environment on its own. Defaults to none: then `apiKey` is required.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Defaults to `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** Sent as `OpenAI-Organization`. Defaults to none. */
  organization?: string;
  /** Sent as `OpenAI-Project`. Defaults to none. */
  project?: string;
}

/** Options of {@link openaiCompatible}. */
export interface OpenAICompatibleOptions extends OpenAICommonOptions {
  /** The API's base URL, the part before `/chat/completions`, such as `http://127.0.0.1:11434/v1`. Required. */
  baseUrl: string;
  /** The model name the server knows. Required. */
  model: string;
  /** The provider's name in errors, events and reports. Defaults to `openai-compatible`. */
  provider?: string;
}

// Records over the option interfaces, so that adding an option without listing it here fails to compile.
const COMMON_OPTIONS: Record<keyof OpenAICommonOptions, true> = {
  apiKey: true,
  headers: true,
  contextWindowTokens: true,
  fetch: true,
  maxTokensField: true,
  strictJsonSchema: true,
  maxResponseBytes: true,
  reasoningEffort: true,
};
const OPENAI_OPTIONS = Object.keys({
  ...COMMON_OPTIONS,
  env: true,
  baseUrl: true,
  organization: true,
  project: true,
} satisfies Record<keyof OpenAIOptions, true>);
const COMPATIBLE_OPTIONS = Object.keys({
  ...COMMON_OPTIONS,
  baseUrl: true,
  model: true,
  provider: true,
} satisfies Record<keyof OpenAICompatibleOptions, true>);

/**
 * A model behind OpenAI's Chat Completions API. One `generate` is one HTTP request; keel's policies do the retrying.
 *
 * @example
 *   const model = openai('gpt-4.1-mini', { env: process.env });
 */
export function openai(model: string, options: OpenAIOptions = {}): ModelProvider {
  if (typeof model !== 'string' || model.trim() === '') {
    throw new KeelError('config.invalid', 'openai(model): model must be a model name such as "gpt-4.1-mini"');
  }
  requireOptionsObject(options, { where: 'openai()', example: "{ apiKey: '...' } or { env: process.env }" });
  rejectUnknownOptions(options, OPENAI_OPTIONS, { where: 'openai()' });
  if (options.env !== undefined && (typeof options.env !== 'object' || options.env === null)) {
    throw new KeelError('config.invalid', 'openai(): env must be an object such as process.env');
  }
  for (const name of ['organization', 'project'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'string') {
      throw new KeelError('config.invalid', `openai(): ${name} must be a string`);
    }
  }
  const apiKey = options.apiKey ?? options.env?.OPENAI_API_KEY;
  if (apiKey === undefined || apiKey === '') {
    throw new KeelError(
      'config.invalid',
      'openai(): no API key. Pass { apiKey } or { env: process.env } with OPENAI_API_KEY set',
    );
  }
  const headers: Record<string, string> = {};
  if (options.organization !== undefined) headers['openai-organization'] = options.organization;
  if (options.project !== undefined) headers['openai-project'] = options.project;
  return createProvider({
    ...options,
    apiKey,
    headers: { ...headers, ...options.headers },
    baseUrl: options.baseUrl ?? 'https://api.openai.com/v1',
    model,
    provider: 'openai',
    maxTokensField: options.maxTokensField ?? 'max_completion_tokens',
  });
}

/**
 * A model behind any server speaking the Chat Completions wire format: Ollama, vLLM, LiteLLM, OpenRouter and others.
 * `apiKey` is optional here, since local servers often need none.
 *
 * @example
 *   const model = openaiCompatible({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b', provider: 'ollama' });
 */
export function openaiCompatible(options: OpenAICompatibleOptions): ModelProvider {
  requireOptionsObject(options, {
    where: 'openaiCompatible()',
    example: "{ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' }",
  });
  rejectUnknownOptions(options, COMPATIBLE_OPTIONS, { where: 'openaiCompatible()' });
  return createProvider({
    ...options,
    provider: options.provider ?? 'openai-compatible',
    maxTokensField: options.maxTokensField ?? 'max_tokens',
  });
}

type ProviderSettings = OpenAICommonOptions & {
  baseUrl: string;
  model: string;
  provider: string;
  maxTokensField: MaxTokensField;
};

function createProvider(settings: ProviderSettings): ModelProvider {
  validateOptions(settings);
  const maxResponseBytes = checkMaxResponseBytes(settings.maxResponseBytes, settings.provider);
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (settings.apiKey !== undefined && settings.apiKey !== '')
    headers.authorization = `Bearer ${settings.apiKey}`;
  Object.assign(headers, lowerCaseKeys(settings.headers ?? {}));
  const fetch = settings.fetch ?? globalThis.fetch;
  const { provider, model } = settings;
  const bodySettings = {
    model,
    maxTokensField: settings.maxTokensField,
    strictJsonSchema: settings.strictJsonSchema ?? false,
    reasoningEffort: settings.reasoningEffort,
  };
  // Every error leaves without the key and credential headers, whatever the server echoed.
  const redactor = credentialRedactor(settings.apiKey, headers);

  async function send(
    request: ModelRequest,
    onTextDelta: ((delta: string) => void) | undefined,
  ): Promise<ModelResponse> {
    const stream = onTextDelta !== undefined;
    checkContentSizes(request.messages, OPENAI_CONTENT_LIMITS, provider);
    // A streamed call is cut when it stalls (no first byte, or a silence between chunks): `network.timeout`.
    const stall = stream ? watchModelStream(request, provider) : undefined;
    const signal = stall?.signal ?? request.signal;
    try {
      const response = await post({
        url,
        headers: stream ? { ...headers, accept: 'text/event-stream' } : headers,
        body: toRequestBody(request, bodySettings, stream),
        signal,
        fetch,
        provider,
      });
      const contentType = response.headers.get('content-type') ?? '';
      let result: ModelResponse;
      if (onTextDelta !== undefined && contentType.includes('text/event-stream')) {
        if (response.body === null)
          throw malformedResponseError(provider, 'the event stream has no body', undefined, 200);
        result = await readCompletionStream({
          body: response.body,
          signal,
          provider,
          requestedModel: model,
          onTextDelta,
          onStreamPart: request.onStreamPart,
          maxResponseBytes,
          onReceived: stall?.received,
        });
      } else {
        // A server that ignores `stream: true` answers in one piece: deliver its text as a single delta.
        stall?.stop();
        const body = await readJson(response, signal, provider, maxResponseBytes);
        result = parseCompletion(body, provider, model);
        if (onTextDelta !== undefined && result.content !== '') onTextDelta(result.content);
      }
      const requestId = response.headers.get('x-request-id');
      if (requestId !== null && requestId !== '') result.requestId = requestId;
      const rateLimit = rateLimitFromHeaders(response.headers);
      if (rateLimit !== undefined) result.rateLimit = rateLimit;
      return result;
    } finally {
      stall?.stop();
    }
  }

  const generate = (request: ModelRequest): Promise<ModelResponse> =>
    withRedactedErrors(redactor, request, (onTextDelta) => send(request, onTextDelta));
  return { provider, model, contextWindowTokens: settings.contextWindowTokens, generate };
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
