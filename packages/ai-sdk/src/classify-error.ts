import {
  AISDKError,
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  LoadSettingError,
  NoContentGeneratedError,
  NoSuchModelError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { classify, type ErrorCode, type JsonValue, KeelError } from '@keel/core';

/** Options of {@link classifyAiSdkError}. */
export interface ClassifyAiSdkErrorOptions {
  /** Recorded as the error's `provider`. Defaults to none. */
  provider?: string;
  /** The current time, for Retry-After HTTP dates, in milliseconds since the epoch. Defaults to `Date.now()`. */
  nowMs?: number;
}

// `RetryError` lives in the `ai` package, which this one does not load: it is recognised by the AI SDK's own marker.
const RETRY_ERROR = Symbol.for('vercel.ai.error.AI_RetryError');

// Errors that say the answer could not be read: the request may well succeed again.
const INVALID_RESPONSE = [
  NoContentGeneratedError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  TypeValidationError,
];
// Errors that say the request itself is wrong for this model: sending it again cannot help.
const BAD_REQUEST = [InvalidPromptError, InvalidArgumentError, UnsupportedFunctionalityError];

/**
 * Turns an error thrown by an AI SDK language model into a KeelError, once, where it enters keel.
 *
 * - `APICallError` with a status: by the status, the response headers (`retry-after`, `retry-after-ms`,
 *   `x-ratelimit-reset-*`, `anthropic-ratelimit-*`: the wait is `retryAfterMs`) and the provider's error body
 *   (OpenAI `insufficient_quota`, `context_length_exceeded`, Anthropic `overloaded_error`...), as keel classifies any
 *   HTTP error. A 2xx status means the body could not be read: `provider.invalid_response`.
 * - `APICallError` without a status (the connection failed): by the socket error in its cause
 *   (`ECONNRESET`, `ECONNREFUSED`, undici's codes...), else `network.connection`.
 * - `RetryError` (from a model that retried on its own): its last error, `data.aiSdkAttempts` saying how many.
 * - `LoadAPIKeyError`: `provider.auth` (the key is missing); `LoadSettingError`: `config.invalid`.
 * - `NoContentGeneratedError`, `EmptyResponseBodyError`, `InvalidResponseDataError`, `JSONParseError`,
 *   `TypeValidationError`: `provider.invalid_response` (retryable).
 * - `InvalidPromptError`, `InvalidArgumentError`, `UnsupportedFunctionalityError`: `provider.bad_request`;
 *   `NoSuchModelError`: `provider.not_found`.
 * - Anything else: keel's `classify` (timeouts, aborts, system codes, message patterns).
 *
 * The KeelError keeps the AI SDK's error as its `cause`. A KeelError is returned as it is.
 *
 * @example
 *   try { await model.doGenerate(options); } catch (error) { throw classifyAiSdkError(error, { provider: model.provider }); }
 */
export function classifyAiSdkError(error: unknown, options: ClassifyAiSdkErrorOptions = {}): KeelError {
  const provider = options.provider;
  if (KeelError.isInstance(error)) return error;
  if (isRetryError(error)) {
    const last = classifyAiSdkError(error.lastError, options);
    return rebuilt(last, error, { aiSdkAttempts: error.errors.length });
  }
  const statusCode = statusOf(error);
  if (statusCode !== undefined) return fromHttp(error as APICallError, statusCode, options);
  if (APICallError.isInstance(error)) {
    const verdict = classify(error.cause ?? error, { provider, nowMs: options.nowMs });
    if (verdict.code !== 'internal.unexpected') return rebuilt(verdict, error);
    return fixed(error.isRetryable ? 'network.connection' : 'provider.bad_request', error, provider);
  }
  if (LoadAPIKeyError.isInstance(error)) {
    return fixed(
      'provider.auth',
      error,
      provider,
      'The AI SDK provider found no API key: pass apiKey when creating it, or set the variable its message names.',
    );
  }
  if (LoadSettingError.isInstance(error)) return fixed('config.invalid', error, provider);
  if (NoSuchModelError.isInstance(error)) return fixed('provider.not_found', error, provider);
  if (INVALID_RESPONSE.some((kind) => kind.isInstance(error)))
    return fixed('provider.invalid_response', error, provider);
  if (BAD_REQUEST.some((kind) => kind.isInstance(error)))
    return fixed('provider.bad_request', error, provider);
  return classify(error, { provider, nowMs: options.nowMs });
}

/** An HTTP error: the exchange as keel reads any, the AI SDK's error kept as the cause. */
function fromHttp(error: APICallError, status: number, options: ClassifyAiSdkErrorOptions): KeelError {
  if (status >= 200 && status < 300) {
    return fixed('provider.invalid_response', error, options.provider, undefined, status);
  }
  const verdict = classify(
    {
      status,
      headers: error.responseHeaders ?? {},
      body: error.data ?? error.responseBody,
      message: error.message,
    },
    { provider: options.provider, nowMs: options.nowMs },
  );
  if (verdict.code !== 'internal.unexpected') return rebuilt(verdict, error);
  return fixed(
    error.isRetryable === true ? 'provider.server_error' : 'provider.bad_request',
    error,
    options.provider,
    undefined,
    status,
  );
}

function statusOf(error: unknown): number | undefined {
  if (!AISDKError.isInstance(error) && !hasGatewayMarker(error)) return undefined;
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599
    ? status
    : undefined;
}

// The AI Gateway's errors carry their own marker and a `statusCode`.
function hasGatewayMarker(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[Symbol.for('vercel.ai.gateway.error')] === true
  );
}

function isRetryError(error: unknown): error is { lastError: unknown; errors: unknown[] } {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[RETRY_ERROR] === true &&
    Array.isArray((error as { errors?: unknown }).errors)
  );
}

/** `verdict` with the AI SDK's error as its cause (and more data). */
function rebuilt(verdict: KeelError, cause: unknown, data: Record<string, JsonValue> = {}): KeelError {
  return new KeelError(verdict.code, verdict.message, {
    retryable: verdict.retryable,
    retryAfterMs: verdict.retryAfterMs,
    status: verdict.status,
    provider: verdict.provider,
    data: { ...verdict.data, ...data },
    guidance: verdict.guidance,
    cause,
  });
}

function fixed(
  code: ErrorCode,
  error: unknown,
  provider: string | undefined,
  guidance?: string,
  status?: number,
): KeelError {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  return new KeelError(code, `${provider === undefined ? '' : `${provider}: `}${name}: ${message}`, {
    provider,
    status,
    guidance,
    data: { aiSdkError: name },
    cause: error,
  });
}
