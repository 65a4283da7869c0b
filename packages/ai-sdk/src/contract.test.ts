// The ModelProvider contract of @keel/core/testing, run by fromAiSdk over the AI SDK's own providers: @ai-sdk/openai
// on the Chat Completions wire and @ai-sdk/anthropic on the Messages wire, each against a server on 127.0.0.1.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { anthropicMessagesWire, modelProviderContract, openaiChatWire } from '@keel/core/testing';
import { fromAiSdk } from './index.js';

modelProviderContract({
  name: 'fromAiSdk(@ai-sdk/openai chat)',
  wire: openaiChatWire,
  maxResponseBytes: false,
  requiresStreamEnd: false,
  acceptsUnstreamedAnswer: false,
  create: (baseURL, { apiKey, fetch }) =>
    fromAiSdk(createOpenAI({ baseURL, apiKey, fetch }).chat('m'), { secrets: [apiKey] }),
});

modelProviderContract({
  name: 'fromAiSdk(@ai-sdk/anthropic)',
  wire: anthropicMessagesWire,
  maxResponseBytes: false,
  acceptsUnstreamedAnswer: false,
  create: (baseURL, { apiKey, fetch }) =>
    fromAiSdk(createAnthropic({ baseURL, apiKey, fetch })('c'), { secrets: [apiKey] }),
});
