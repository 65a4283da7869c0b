// Recovery of a Messages API stream broken mid-answer, cut after many byte offsets of a real server's answers.
import { anthropicMessagesWire, streamRecoveryContract } from '@keel/core/testing';
import { anthropic } from './index.js';

streamRecoveryContract({
  name: 'anthropic',
  wire: anthropicMessagesWire,
  create: (baseUrl) => anthropic('c', { baseUrl, apiKey: 'test-key' }),
});
