// The ModelProvider contract of @keel/core/testing (aborts, cut-off and oversize bodies, statuses, the key), run by
// both makers over the Chat Completions wire. What only this provider does is tested beside it.
import { modelProviderContract, openaiChatWire } from '@keel/core/testing';
import { openai, openaiCompatible } from './index.js';

modelProviderContract({
  name: 'openaiCompatible',
  wire: openaiChatWire,
  create: (baseUrl, { apiKey, fetch, maxResponseBytes }) =>
    openaiCompatible({ baseUrl, model: 'm', provider: 'vllm', apiKey, fetch, maxResponseBytes }),
});

modelProviderContract({
  name: 'openai',
  wire: openaiChatWire,
  create: (baseUrl, { apiKey, fetch, maxResponseBytes }) =>
    openai('gpt-test', { baseUrl, apiKey, fetch, maxResponseBytes }),
});
