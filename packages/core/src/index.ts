// The public surface of @keel/core. Every name is exported explicitly: adding one here makes it public API.

export { type ErrorCategory, type ErrorCode, ERROR_CODES, isErrorCode } from './errors/codes.js';
export { CONTROL_SIGNAL, type ControlSignal, isControlSignal } from './errors/control.js';
export { type JsonValue, KeelError, type KeelErrorOptions } from './errors/keel-error.js';
export { REDACTED, redactSecrets } from './errors/redact.js';
export {
  deserializeError,
  MAX_CAUSE_DEPTH,
  type SerializedError,
  serializeError,
} from './errors/serialize.js';

export { type Clock, systemClock, type TimerHandle } from './policies/clock.js';
export { isAborted, NEVER_ABORTED_SIGNAL, toContext, withAttempt } from './policies/context.js';
export { EventEmitter } from './policies/events.js';
export type {
  ClockOption,
  Disposable,
  Event,
  Policy,
  PolicyContext,
  PolicyFunction,
  SignalInput,
} from './policies/policy.js';
export { sleep } from './policies/sleep.js';

// policies: bulkhead, rate limiter, fallback, hedge, compose
export {
  type BulkheadOptions,
  type BulkheadPolicy,
  type BulkheadRejectEvent,
  bulkhead,
} from './policies/bulkhead.js';
export {
  type AlternativeResultOf,
  type ComposablePolicy,
  type ComposedPolicy,
  compose,
  noop,
} from './policies/compose.js';
export {
  type FallbackAlternative,
  type FallbackEvent,
  type FallbackFailure,
  type FallbackOptions,
  type FallbackPolicy,
  fallback,
} from './policies/fallback.js';
export { type HedgeEvent, type HedgeOptions, type HedgePolicy, hedge } from './policies/hedge.js';
export {
  type RateLimiterOptions,
  type RateLimiterPolicy,
  type RateLimitRejectEvent,
  rateLimiter,
} from './policies/rate-limiter.js';
// end policies: bulkhead ... compose

export type {
  FinishReason,
  JsonSchema,
  Message,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  Usage,
} from './spec/model.js';
export type { Lease, LedgerEntry, RunRecord, RunStatus, RunStore, RunSummary } from './spec/run-store.js';
export type { Tool, ToolContext, ToolResult, ValidationIssue, ValidationResult } from './spec/tool.js';

// store
export { MemoryRunStore } from './store/memory-run-store.js';
