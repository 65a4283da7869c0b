// Recovery of a Chat Completions stream broken mid-answer, cut after every byte of a real server's answers.
import { openaiChatWire, streamRecoveryContract } from '@keel/core/testing';
import { openaiCompatible } from './index.js';

streamRecoveryContract({
  name: 'openaiCompatible',
  wire: openaiChatWire,
  create: (baseUrl) => openaiCompatible({ baseUrl, model: 'm' }),
});
