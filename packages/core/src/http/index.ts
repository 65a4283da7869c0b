// `@keel/core/http`: what every provider speaking HTTP needs: one request, its errors classified, and
// server-sent events read from a response body. Explicit exports only.
export {
  classifyBodyError,
  excerpt,
  invalidResponse,
  type PostRequest,
  post,
  readJson,
  streamReadError,
} from './provider-http.js';
export {
  checkMaxResponseBytes,
  DEFAULT_MAX_RESPONSE_BYTES,
  readBoundedText,
  responseTooLarge,
} from './response-size.js';
export {
  readServerSentEvents,
  type ServerSentEventsOptions,
  type SseEvent,
} from './server-sent-events.js';
