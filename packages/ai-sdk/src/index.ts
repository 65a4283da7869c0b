// The public surface of @keel/ai-sdk. Every name is exported explicitly: adding one here makes it public API.
export { type ClassifyAiSdkErrorOptions, classifyAiSdkError } from './classify-error.js';
export { type FromAiSdkOptions, fromAiSdk } from './from-ai-sdk.js';
export {
  type KeelMiddlewareEvent,
  type KeelMiddlewareOptions,
  type KeelMiddlewareRetryOptions,
  keelMiddleware,
} from './middleware.js';
export {
  type KeelMessageMetadata,
  toUIMessageStream,
  toUIMessageStreamResponse,
  type UIMessageStreamChunk,
  type UIMessageStreamOptions,
} from './ui-message-stream.js';
