// Recovery of a stream broken mid-answer through the AI SDK bridge (@ai-sdk/openai on the Chat Completions wire,
// @ai-sdk/anthropic on the Messages wire), cut after many byte offsets of a real server's answers.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { anthropicMessagesWire, openaiChatWire, streamRecoveryContract } from '@keel/core/testing';
import { fromAiSdk } from './index.js';

streamRecoveryContract({
  name: 'fromAiSdk(@ai-sdk/openai chat)',
  wire: openaiChatWire,
  create: (baseURL) => fromAiSdk(createOpenAI({ baseURL, apiKey: 'test-key' }).chat('m')),
});

streamRecoveryContract({
  name: 'fromAiSdk(@ai-sdk/anthropic)',
  wire: anthropicMessagesWire,
  create: (baseURL) => fromAiSdk(createAnthropic({ baseURL, apiKey: 'test-key' })('c')),
});
