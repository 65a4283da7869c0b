// The AI SDK's error types, as its providers throw them, classified into keel's codes.
import {
  APICallError,
  EmptyResponseBodyError,
  InvalidPromptError,
  InvalidResponseDataError,
  LoadAPIKeyError,
  LoadSettingError,
  NoContentGeneratedError,
  NoSuchModelError,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { KeelError } from '@keel/core';
import { RetryError } from 'ai';
import { describe, expect, it } from 'vitest';
import { classifyAiSdkError } from './index.js';

function apiCallError(options: Partial<ConstructorParameters<typeof APICallError>[0]>): APICallError {
  return new APICallError({
    message: 'Request failed',
    url: 'https://api.example.com/v1/chat/completions',
    requestBodyValues: { model: 'm' },
    ...options,
  });
}

describe('classifyAiSdkError', () => {
  it('reads the status, the Retry-After headers and the body of an APICallError, keeping it as the cause', () => {
    const original = apiCallError({
      statusCode: 429,
      responseHeaders: { 'retry-after': '7', 'x-request-id': 'req_1' },
      responseBody: '{"error":{"message":"Slow down","type":"rate_limit_error"}}',
    });
    const error = classifyAiSdkError(original, { provider: 'openai.chat' });
    expect(error).toMatchObject({
      code: 'provider.rate_limited',
      retryable: true,
      retryAfterMs: 7_000,
      status: 429,
      provider: 'openai.chat',
    });
    expect(error.data.requestId).toBe('req_1');
    expect(error.cause).toBe(original);
    expect(
      classifyAiSdkError(apiCallError({ statusCode: 503, responseHeaders: { 'retry-after-ms': '250' } })),
    ).toMatchObject({ code: 'provider.overloaded', retryAfterMs: 250 });
  });

  it('lets a provider body decide over the status where it is specific', () => {
    const quota = apiCallError({
      statusCode: 429,
      responseBody: '{"error":{"message":"You exceeded your quota","code":"insufficient_quota"}}',
      data: { error: { message: 'You exceeded your quota', code: 'insufficient_quota' } },
    });
    expect(classifyAiSdkError(quota)).toMatchObject({ code: 'provider.quota_exhausted', retryable: false });
    const overflow = apiCallError({
      statusCode: 400,
      data: { error: { message: 'too long', code: 'context_length_exceeded' } },
    });
    expect(classifyAiSdkError(overflow).code).toBe('provider.context_overflow');
    expect(classifyAiSdkError(apiCallError({ statusCode: 401 })).code).toBe('provider.auth');
    expect(classifyAiSdkError(apiCallError({ statusCode: 400 })).code).toBe('provider.bad_request');
  });

  it('a 2xx APICallError (a body the provider could not read) is provider.invalid_response, retryable', () => {
    const error = classifyAiSdkError(apiCallError({ statusCode: 200, message: 'Invalid JSON response' }));
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true, status: 200 });
  });

  it('an APICallError without a status is classified by the socket error in its cause', () => {
    const socket = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const fetchFailed = new TypeError('fetch failed', { cause: socket });
    const error = classifyAiSdkError(
      apiCallError({ message: 'Cannot connect to API: fetch failed', cause: fetchFailed, isRetryable: true }),
    );
    expect(error).toMatchObject({ code: 'network.connection', retryable: true });
    expect(classifyAiSdkError(apiCallError({ isRetryable: true })).code).toBe('network.connection');
  });

  it("a RetryError is its last error, with the AI SDK's attempts in data", () => {
    const last = apiCallError({ statusCode: 500 });
    const error = classifyAiSdkError(
      new RetryError({
        message: 'Failed after 3 attempts',
        reason: 'maxRetriesExceeded',
        errors: [last, last, last],
      }),
    );
    expect(error).toMatchObject({ code: 'provider.server_error', data: { aiSdkAttempts: 3 } });
  });

  it.each([
    [
      new LoadAPIKeyError({ message: 'OpenAI API key is missing. Pass it using apiKey or OPENAI_API_KEY' }),
      'provider.auth',
    ],
    [new LoadSettingError({ message: 'baseURL is missing' }), 'config.invalid'],
    [new NoContentGeneratedError(), 'provider.invalid_response'],
    [new EmptyResponseBodyError(), 'provider.invalid_response'],
    [
      new InvalidResponseDataError({ data: {}, message: 'Expected a tool call id' }),
      'provider.invalid_response',
    ],
    [new InvalidPromptError({ prompt: [], message: 'messages must not be empty' }), 'provider.bad_request'],
    [new UnsupportedFunctionalityError({ functionality: 'tool choice' }), 'provider.bad_request'],
    [new NoSuchModelError({ modelId: 'x', modelType: 'languageModel' }), 'provider.not_found'],
  ])('%s is %s', (error, code) => {
    const classified = classifyAiSdkError(error, { provider: 'p' });
    expect(classified.code).toBe(code);
    expect(classified.cause).toBe(error);
    expect(classified.message).toMatch(/^p: AI_\w+: /);
  });

  it('leaves a KeelError as it is and classifies anything else as keel does', () => {
    const keel = new KeelError('provider.overloaded', 'busy');
    expect(classifyAiSdkError(keel)).toBe(keel);
    const timeout = new DOMException('The operation timed out', 'TimeoutError');
    expect(classifyAiSdkError(timeout).code).toBe('network.timeout');
  });
});
