// The public surface of @keel/core. Every name is exported explicitly: adding one here makes it public API.

export {
  type ClassificationMatch,
  type ClassificationRule,
  type ClassifyOptions,
  classify,
  createClassifier,
  type RuleContext,
} from './errors/classify.js';
export {
  type ClassifyResponseOptions,
  classifyResponse,
  MAX_ERROR_BODY_BYTES,
} from './errors/classify-response.js';
export { ERROR_CODES, type ErrorCategory, type ErrorCode, isErrorCode } from './errors/codes.js';
export { CONTROL_SIGNAL, type ControlSignal, isControlSignal } from './errors/control.js';
export { type JsonValue, KeelError, type KeelErrorOptions } from './errors/keel-error.js';
export { isSecretKey, REDACTED, redactSecrets } from './errors/redact.js';
export { createRedactor, MIN_SECRET_CHARS, type Redactor } from './errors/redactor.js';
export { type HeadersLike, MAX_RETRY_AFTER_MS, retryAfterFromHeaders } from './errors/retry-after.js';
export { type SecretValueRedactor, secretValueRedactor } from './errors/secret-values.js';
export {
  deserializeError,
  MAX_CAUSE_DEPTH,
  type SerializedError,
  serializeError,
} from './errors/serialize.js';

export { type Clock, systemClock, type TimerHandle } from './policies/clock.js';
export {
  CALL_SETTLED_REASON,
  isAborted,
  NEVER_ABORTED_SIGNAL,
  toContext,
  withAttempt,
} from './policies/context.js';
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

// policies: retry/timeout

export {
  constant,
  type DecorrelatedJitterOptions,
  type Delay,
  type DelayInput,
  decorrelatedJitter,
  type ExponentialOptions,
  equalJitter,
  exponential,
  fullJitter,
  MAX_DELAY_MS,
  type RandomSource,
} from './policies/delays.js';
export {
  type RetryEvent,
  type RetryGiveUpEvent,
  type RetryGiveUpReason,
  type RetryOptions,
  type RetryPolicy,
  type RetrySuccessEvent,
  retry,
} from './policies/retry.js';
export {
  type RetryBudget,
  type RetryBudgetDenial,
  type RetryBudgetDeniedEvent,
  type RetryBudgetOptions,
  type RetryBudgetSnapshot,
  retryBudget,
} from './policies/retry-budget.js';
export type {
  RetryBudgetCounts,
  RetryBudgetLimits,
  RetryBudgetStore,
  RetryBudgetStoreFactory,
  RetryBudgetStoreOptions,
} from './policies/retry-budget-store.js';
export { inMemoryRetryBudgetStore, RETRY_BUDGET_SLOTS } from './policies/in-memory-retry-budget-store.js';
export {
  type TimeoutEvent,
  type TimeoutOptions,
  type TimeoutPolicy,
  type TimeoutStrategy,
  timeout,
} from './policies/timeout.js';
// end policies: retry/timeout

// policies: bulkhead, rate limiter, fallback, hedge, compose

export {
  type BulkheadOptions,
  type BulkheadPolicy,
  type BulkheadRejectedEvent,
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
  type RateLimiterRejectedEvent,
  rateLimiter,
} from './policies/rate-limiter.js';
export type {
  RateLimiterGrant,
  RateLimiterRefusal,
  RateLimiterStore,
  RateLimiterStoreFactory,
  RateLimiterStoreOptions,
} from './policies/rate-limiter-store.js';
export { inMemoryRateLimiterStore } from './policies/in-memory-rate-limiter-store.js';
// end policies: bulkhead ... compose

// policies: circuit breaker
export {
  type BreakerAdmission,
  type BreakerOutcome,
  type BreakerRejection,
  type BreakerRules,
  type BreakerStore,
  type BreakerStoreFactory,
  type BreakerStoreOptions,
  type BreakerTicket,
  type BreakerTransition,
  type BreakerTransitionReason,
  type ClosedTicket,
  type MaybePromise,
  type OpenDuration,
  openPeriodMs,
  type ProbeTicket,
} from './policies/breaker/breaker-store.js';
export { type ConsecutiveOptions, consecutive } from './policies/breaker/consecutive.js';
export { type CountWindowOptions, countWindow } from './policies/breaker/count-window.js';
export { CALLER_FAULT_CODES, isDependencyFailure } from './policies/breaker/failures.js';
export { InMemoryBreakerStore, inMemoryBreakerStore } from './policies/breaker/in-memory-breaker-store.js';
export {
  type BreakerSnapshot,
  type BreakerState,
  parseBreakerSnapshot,
} from './policies/breaker/snapshot.js';
export type { BreakerStrategy, BreakerWindow } from './policies/breaker/strategy.js';
export { type TimeWindowOptions, timeWindow } from './policies/breaker/time-window.js';
export {
  type BreakerIsolation,
  type BreakerRejectedEvent,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
  type OpenDurationOptions,
} from './policies/circuit-breaker.js';
// end policies: circuit breaker

export type {
  FinishReason,
  JsonSchema,
  Message,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ProviderMetadata,
  ReasoningPart,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  Usage,
} from './spec/model.js';
export type {
  CancellationRequest,
  CheckpointWrite,
  CompletedToolCall,
  Lease,
  LedgerEntry,
  NewRun,
  RunRecord,
  RunStatus,
  RunStore,
  RunSummary,
  SessionAppend,
  SessionClaim,
  SessionConflictData,
  SessionRecord,
  SessionSummary,
  SessionTurn,
  StartedToolCall,
  StepCommit,
} from './spec/run-store.js';
export type {
  FallbackValue,
  ReconcileContext,
  ReconcileResult,
  Tool,
  ToolContext,
  ToolDegradation,
  ToolFallback,
  ToolFallbackCondition,
  ToolFallbackContext,
  ToolProgress,
  ToolReconcile,
  ToolResult,
  ToolSource,
  ValidationIssue,
  ValidationResult,
} from './spec/tool.js';

// store
export { checkpointConflict, leaseConflict, runNotFound, toolCallNotStarted } from './store/conflicts.js';
export {
  type LedgerRow,
  ledgerEntryFromRow,
  RUN_SUMMARY_COLUMNS,
  type RunRow,
  runRecordFromRow,
  runSummaryFromRow,
} from './store/sql-rows.js';
export { MemoryRunStore } from './store/memory-run-store.js';
export {
  holdsSession,
  type SessionHead,
  type SessionHolder,
  sessionAppendConflict,
  sessionClaimConflict,
  sessionNotFound,
} from './store/session-conflicts.js';
export {
  SESSION_COLUMNS,
  type SessionRow,
  type SessionTurnRow,
  sessionSummaryFromRow,
  sessionTurnFromRow,
} from './store/session-rows.js';

// agent: tools, guardrails, conversation
export {
  type ConversationManager,
  type ConversationReduceContext,
  type ConversationReduction,
  noReduction,
} from './agent/conversation/manager.js';
export { type SlidingWindowOptions, slidingWindow } from './agent/conversation/sliding-window.js';
export { SUMMARY_PREFIX, type SummarizingOptions, summarizing } from './agent/conversation/summarizing.js';
// The option kit, for adapter authors: checks with object arguments whose refusals carry `{ where, option, path }`.
export {
  type ClockShape,
  type FunctionCheck,
  type IntegerCheck,
  MAX_TIMER_MS,
  type NumberCheck,
  type OptionCheck,
  requireBoolean,
  requireClock,
  requireFunction,
  requireInteger,
  requireMilliseconds,
  requireNumber,
  requireOneOf,
  requireString,
  requireStringArray,
  type StringArrayCheck,
  type StringCheck,
} from './options/checks.js';
export { closestName, editDistance } from './options/closest-name.js';
export {
  type KnownOptions,
  type OptionsObjectCheck,
  rejectUnknownOptions,
  requireOptionsObject,
} from './options/known-options.js';
export {
  describeValue,
  type OptionErrorData,
  type OptionErrorInput,
  type OptionPath,
  optionError,
  optionErrorData,
  optionPathOf,
  optionPathText,
  throwOptionError,
} from './options/option-error.js';
export {
  formatIssues,
  formatSchema,
  invalidArgumentsError,
  malformedArgumentsError,
  type ParsedArguments,
  parseToolArguments,
  unknownToolError,
} from './agent/correction/correction.js';
export {
  type CorrectionDecision,
  type CorrectionFailure,
  type CorrectionKind,
  type CorrectionLimits,
  type CorrectionStopReason,
  CorrectionTracker,
  type CorrectionTrackerState,
} from './agent/correction/correction-tracker.js';
export {
  type Directive,
  isDirective,
  isRetryStep,
  isStopRun,
  RetryStep,
  retryStep,
  StopRun,
  stopRun,
  type ToolStop,
} from './agent/loop/directives.js';
export {
  type Guardrail,
  type GuardrailContext,
  type GuardrailFinding,
  type GuardrailOutcome,
  type GuardrailResult,
  type GuardrailStage,
  type GuardrailTrigger,
  guardrail,
  runGuardrails,
  runToolCallGuardrails,
  type TextGuardrail,
  type ToolCallGuardrail,
} from './agent/guardrails/guardrail.js';
export {
  detectPii,
  luhnValid,
  PII_KINDS,
  type PiiGuardrailOptions,
  type PiiKind,
  type PiiMatch,
  piiGuardrail,
  redactPii,
} from './agent/guardrails/pii.js';
export {
  detectPromptInjection,
  type InjectionPattern,
  PROMPT_INJECTION_PATTERNS,
  type PromptInjectionGuardrailOptions,
  promptInjectionGuardrail,
} from './agent/guardrails/prompt-injection.js';
export { formatJsonPath } from './agent/schemas/json-path.js';
export { type JsonSchemaValidationOptions, validateJsonSchema } from './agent/schemas/json-schema.js';
export { type JsonParseResult, type JsonSyntaxError, parseJson } from './agent/schemas/parse-json.js';
export {
  isStandardSchema,
  type JsonSchemaInput,
  type ReadonlyJsonValue,
  type ResolvedSchema,
  resolveSchema,
  type SchemaLike,
  type StandardSchemaResult,
  type StandardSchemaV1,
} from './agent/schemas/schema.js';
export { MAX_PATTERN_SUBJECT_LENGTH, MAX_SCHEMA_PATTERN_LENGTH } from './agent/schemas/schema-pattern.js';
export {
  extractJson,
  type StructuredOutput,
  type StructuredOutputOptions,
  type StructuredOutputResult,
  structuredOutput,
} from './agent/correction/structured-output.js';
export {
  indexTools,
  TOOL_NAME_PATTERN,
  type ToolOptions,
  tool,
  toToolDefinition,
} from './agent/tools/tool.js';
export {
  DEFAULT_TOOL_RESULT_MAX_CHARS,
  type RenderedToolResult,
  type RenderToolResultOptions,
  renderToolResult,
  type ToolErrorResult,
  type ToolSuccessResult,
  toolError,
  toolSuccess,
} from './agent/tools/tool-result.js';
export type { ApprovalCheck } from './spec/tool.js';
// end agent: tools, guardrails, conversation

// agent: run loop
export { type Agent, agent } from './agent/agent.js';
export type { AgentBreakerOptions, AgentOptions, AgentRetryOptions } from './agent/agent-options.js';
export type { UncertainCallPolicy } from './agent/agent-runtime.js';
export { combineBudgets } from './agent/loop/budget.js';
export { type AbortCause, RunAbort, RunRegistry, runRegistry } from './agent/loop/cancellation.js';
export type {
  CorrectionEventKind,
  DependencyKind,
  RunAnnotations,
  RunEvent,
  RunEventListener,
  RunEventType,
} from './agent/loop/events.js';
export { CONTINUE_PROMPT } from './agent/loop/final-answer.js';
export { DEFAULT_LIMITS, type ResolvedLimits, type RunLimits, resolveLimits } from './agent/loop/limits.js';
export { FALLBACK_CODES } from './agent/loop/model-recovery.js';
export type { BreakerMove, FallbackRecord, RunReport } from './agent/loop/report.js';
export type { RunOptions, RunResult } from './agent/loop/run.js';
export {
  type CheckpointHook,
  idempotencyKeyOf,
  type PendingToolCall,
  RUN_STATE_SCHEMA_VERSION,
  type RunPhase,
  type RunState,
  type RunTransition,
} from './agent/durability/run-state.js';
export { type StopReason, stopReasonOf, type TerminalStatus } from './agent/loop/stop-reason.js';
// end agent: run loop

// agent: durable runs
export { type DurabilityOptions, PROCESS_OWNER } from './agent/durability/durability.js';
export {
  EVENT_JOURNAL_LIMIT,
  type EventJournal,
  type JournalEntry,
  type JournalEntryType,
} from './agent/durability/event-journal.js';
export type {
  ApprovalAnswer,
  PendingDecision,
  ToolCallDecision,
} from './agent/durability/pending-decision.js';
export {
  type QueuedRunOptions,
  type QueuedRunState,
  queuedRun,
  readQueuedState,
} from './agent/durability/queued-run.js';
export type { ResumeOptions } from './agent/durability/resume.js';
export { migrateRunState } from './agent/durability/run-state-migrations.js';
// end agent: durable runs

// agent: sessions
export { checkSessionId, SESSION_ID_PATTERN, type SessionBusy } from './agent/sessions/session-options.js';
export type { RunSessionOutcome, SessionRunState } from './agent/sessions/session-state.js';
// end agent: sessions
