import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider';
import { KeelError, type ModelProvider, type ModelRequest, type ModelResponse } from '@keel/core';
import {
  createRedactor,
  isControlSignal,
  isSecretKey,
  rejectUnknownOptions,
  requireOptionsObject,
  type StreamStallWatch,
  watchModelStream,
} from '@keel/core/adapter';
import { classifyAiSdkError } from './classify-error.js';
import { checkLanguageModel } from './language-model.js';
import { type CallSettings, toCallOptions } from './prompt.js';
import { partsOfContent, toModelResponse } from './result.js';
import { readStream, StreamErrorPart } from './stream.js';

/** Options of {@link fromAiSdk}. */
export interface FromAiSdkOptions {
  /**
   * The provider's name in keel's errors, events, breakers and reports (`<provider>/<model>`). Defaults to the
   * model's own `provider`, such as `openai.chat` or `anthropic.messages`.
   */
  provider?: string;
  /** The model's context window in tokens, when known. Defaults to undefined (unknown). */
  contextWindowTokens?: number;
  /**
   * The AI SDK's `providerOptions`, sent with every call: what is particular to one provider, such as
   * `{ openai: { reasoningEffort: 'low' } }` or `{ anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } }`.
   * Defaults to none.
   */
  providerOptions?: SharedV3ProviderOptions;
  /** Extra HTTP headers on every call. Defaults to none. */
  headers?: Record<string, string>;
  /**
   * Values to remove from every error before it leaves, such as the API key the AI SDK provider was made with. The
   * AI SDK keeps the response body and headers on its errors, so a server that echoes the key would otherwise carry
   * it into keel's errors, events and stored run state; the values of credential `headers` above are removed too.
   * Values under 8 characters are not removed literally. Defaults to none.
   */
  secrets?: readonly string[];
}

const KNOWN_OPTIONS = Object.keys({
  provider: true,
  contextWindowTokens: true,
  providerOptions: true,
  headers: true,
  secrets: true,
} satisfies Record<keyof FromAiSdkOptions, true>);

/**
 * Any AI SDK language model (specification v3, the AI SDK 6 providers: `@ai-sdk/openai`, `@ai-sdk/anthropic`,
 * `@ai-sdk/google`, `@ai-sdk/amazon-bedrock`, `@ai-sdk/mistral`, `@ai-sdk/groq`, ...) as a keel model provider.
 *
 * One `generate` is one `doGenerate` (or, when the caller streams, one `doStream`): the model is called directly,
 * without `generateText` and its retries, so keel's retry policy, breaker and fallbacks are the only ones and the
 * run report's request count is what the provider received. Messages, tools, tool choice, structured output
 * (`responseFormat` json), streaming, usage (reasoning tokens included), finish reasons and the abort signal map to
 * their AI SDK counterparts; reasoning blocks and tool calls keep the provider metadata they came with, and go back
 * with it. Failures are classified from the AI SDK's error types by {@link classifyAiSdkError}.
 *
 * Mind the provider's own retries: an AI SDK provider made with a custom `fetch` that retries would send more than
 * keel counts. The providers themselves do not retry.
 *
 * @example
 *   import { createOpenAI } from '@ai-sdk/openai';
 *   const model = fromAiSdk(createOpenAI({ apiKey }).chat('gpt-4.1-mini'));
 *   const assistant = agent({ model, fallbacks: [fromAiSdk(createAnthropic({ apiKey: other })('claude-haiku-4-5'))] });
 */
export function fromAiSdk(model: LanguageModelV3, options: FromAiSdkOptions = {}): ModelProvider {
  const fail = (message: string): never => {
    throw new KeelError('config.invalid', `fromAiSdk(): ${message}`);
  };
  checkLanguageModel(model, 'fromAiSdk(model)');
  requireOptionsObject(options, { where: 'fromAiSdk()', example: "{ provider: 'openai' }" });
  rejectUnknownOptions(options, KNOWN_OPTIONS, { where: 'fromAiSdk()' });
  const provider = options.provider ?? model.provider;
  if (typeof provider !== 'string' || provider.trim() === '') fail('provider must be a non-empty name');
  const window = options.contextWindowTokens;
  if (window !== undefined && (!Number.isInteger(window) || window <= 0))
    fail('contextWindowTokens must be a positive integer');
  const { providerOptions, headers } = options;
  if (providerOptions !== undefined && !isPlainObject(providerOptions))
    fail(
      'providerOptions must be an object keyed by provider, such as { openai: { reasoningEffort: "low" } }',
    );
  if (headers !== undefined) {
    if (!isPlainObject(headers)) fail('headers must be an object of strings');
    for (const [name, value] of Object.entries(headers))
      if (typeof value !== 'string') fail(`header ${name} must be a string`);
  }
  const { secrets = [] } = options;
  if (!Array.isArray(secrets) || secrets.some((secret) => typeof secret !== 'string'))
    fail('secrets must be an array of strings, such as [apiKey]');
  const settings: CallSettings = { providerOptions, headers };
  // Every error leaves without the secrets and credential headers, whatever the server echoed.
  const credentialHeaders = Object.entries(headers ?? {}).filter(([name]) => isSecretKey(name));
  const redactor = createRedactor([...secrets, ...credentialHeaders.map(([, value]) => value)]);

  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const { signal, onTextDelta } = request;
    if (signal.aborted) throw signal.reason;
    let callbackError: { error: unknown } | undefined;
    let stall: StreamStallWatch | undefined;
    try {
      const call = toCallOptions(request, settings);
      if (onTextDelta === undefined) {
        const result = await model.doGenerate(call);
        return toModelResponse(
          {
            ...partsOfContent(result.content),
            finishReason: result.finishReason,
            usage: result.usage,
            modelId: result.response?.modelId,
            headers: result.response?.headers,
          },
          provider,
          model.modelId,
        );
      }
      // A stream that stalls (no first part, or a silence between parts) is cut: `network.timeout`.
      stall = watchModelStream(request, provider, 'parts');
      const result = await model.doStream({ ...call, abortSignal: stall.signal });
      const parts = await readStream(
        result.stream,
        (delta) => {
          try {
            onTextDelta(delta);
          } catch (error) {
            callbackError = { error };
            throw error;
          }
        },
        provider,
        request.onStreamPart === undefined
          ? undefined
          : (part) => {
              try {
                request.onStreamPart!(part);
              } catch (error) {
                callbackError = { error };
                throw error;
              }
            },
        stall.received,
      );
      return toModelResponse({ ...parts, headers: result.response?.headers }, provider, model.modelId);
    } catch (error) {
      if (callbackError !== undefined && callbackError.error === error) throw error;
      if (signal.aborted) throw signal.reason;
      if (stall?.signal.aborted) throw redactor.error(stall.signal.reason as KeelError);
      if (isControlSignal(error)) throw error;
      const classified = classifyAiSdkError(error instanceof StreamErrorPart ? error.error : error, {
        provider,
      });
      throw redactor.error(classified);
    } finally {
      stall?.stop();
    }
  }

  return { provider, model: model.modelId, contextWindowTokens: window, generate };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
