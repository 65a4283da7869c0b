// The ModelProvider contract of @keel/core/testing (aborts, cut-off and oversize bodies, statuses, the key), over the
// Messages wire. What only this provider does is tested beside it.
import { anthropicMessagesWire, modelProviderContract } from '@keel/core/testing';
import { anthropic } from './index.js';

modelProviderContract({
  name: 'anthropic',
  wire: anthropicMessagesWire,
  create: (baseUrl, { apiKey, fetch, maxResponseBytes }) =>
    anthropic('c', { baseUrl, apiKey, fetch, maxResponseBytes }),
});
