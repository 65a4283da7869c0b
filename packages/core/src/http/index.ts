// `@keel/core/http`: what every provider speaking HTTP needs: one request, its errors classified and cleared of the
// provider's credentials, bodies read within a size cap, and server-sent events read from a response body. Explicit
// exports only.

export { type RateLimitSnapshot, rateLimitFromHeaders } from '../errors/rate-limit-headers.js';
export {
  classifyBodyError,
  excerpt,
  malformedResponseError,
  type PostRequest,
  post,
  readJson,
  streamReadError,
} from './provider-http.js';
export {
  credentialRedactor,
  type RedactedCallRequest,
  withRedactedErrors,
} from './redaction.js';
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
