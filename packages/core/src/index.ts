// The public surface of @keel/core for people who build agents: the agent and its tools, the resilience policies,
// errors, and the contracts (model provider, tool, run store, run events). Store implementers import from
// `@keel/core/store`, adapter authors from `@keel/core/adapter`. Every name is exported explicitly: adding one here
// makes it public API, and `surface.test.ts` compares the list with `surface/root.txt`.

export { type Agent, agent } from './agent/agent.js';
export type { AgentBreakerOptions, AgentOptions, AgentRetryOptions } from './agent/agent-options.js';
export { type AgentToolOptions, agentTool } from './agent/compose/agent-tool.js';
export { handoff } from './agent/compose/handoff.js';
export type { ConversationManager } from './agent/conversation/manager.js';
export { type SlidingWindowOptions, slidingWindow } from './agent/conversation/sliding-window.js';
export { type SummarizingOptions, summarizing } from './agent/conversation/summarizing.js';
export type { CorrectionLimits } from './agent/correction/correction-tracker.js';
export {
  type StructuredOutput,
  type StructuredOutputOptions,
  structuredOutput,
} from './agent/correction/structured-output.js';
export { migrateRunState } from './agent/durability/run-state-migrations.js';
export {
  type Guardrail,
  type GuardrailContext,
  type GuardrailFinding,
  type GuardrailResult,
  type GuardrailStage,
  type GuardrailTrigger,
  guardrail,
  type TextGuardrail,
} from './agent/guardrails/guardrail.js';
export { type PiiGuardrailOptions, piiGuardrail } from './agent/guardrails/pii.js';
export {
  type PromptInjectionGuardrailOptions,
  promptInjectionGuardrail,
} from './agent/guardrails/prompt-injection.js';
export type { RunOptions, RunResult } from './agent/loop/run.js';
export {
  type QueuedRunOptions,
  type QueuedRunState,
  queuedRun,
  readQueuedState,
} from './agent/queued-run.js';
export type { ResumeOptions } from './agent/resume.js';
export type { UncertainCallPolicy } from './agent/run/agent-runtime.js';
export { retryStep, stopRun } from './agent/run/directives.js';
export type { DurabilityOptions } from './agent/run/durability.js';
export { EVENT_JOURNAL_LIMIT, type EventJournal, type JournalEntry } from './agent/run/event-journal.js';
export type { RunLimits } from './agent/run/limits.js';
export type { ApprovalAnswer, PendingDecision, ToolCallDecision } from './agent/run/pending-decision.js';
export type { BreakerMove, RunReport } from './agent/run/report.js';
export { newRunId } from './agent/run/run-id.js';
export type { CheckpointHook, RunState } from './agent/run/run-state.js';
export { checkSessionId } from './agent/run/session-options.js';
export type { StopReason, TerminalStatus } from './agent/run/stop-reason.js';
export { toolError, toolSuccess } from './agent/run/tool-result.js';
export type { AgentStream, StreamOptions } from './agent/stream/agent-stream.js';
export type { StreamPart } from './agent/stream/stream-part.js';
export { type ToolOptions, tool } from './agent/tools/tool.js';
export { classify } from './errors/classify.js';
export { type ErrorCode, isErrorCode } from './errors/codes.js';
export { type JsonValue, KeelError } from './errors/keel-error.js';
export { redactSecrets } from './errors/redact.js';
export { type SerializedError, serializeError } from './errors/serialize.js';
export type { BudgetLimit, BudgetOptions } from './governance/budget-options.js';
export type { PaceOptions } from './governance/pace-options.js';
export type { ModelPrice, PriceTable } from './governance/prices.js';
export { type SessionCost, sessionCost } from './governance/session-cost.js';
export type { TenantOptions } from './governance/tenant-limits.js';
export type { BreakerTransition } from './policies/breaker/breaker-store.js';
export { type ConsecutiveOptions, consecutive } from './policies/breaker/consecutive.js';
export { type CountWindowOptions, countWindow } from './policies/breaker/count-window.js';
export type { BreakerStrategy } from './policies/breaker/strategy.js';
export { type TimeWindowOptions, timeWindow } from './policies/breaker/time-window.js';
export { type BulkheadOptions, type BulkheadPolicy, bulkhead } from './policies/bulkhead.js';
export {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
} from './policies/circuit-breaker.js';
export { type Clock, systemClock } from './policies/clock.js';
export {
  type AlternativeResultOf,
  type ComposablePolicy,
  type ComposedPolicy,
  compose,
} from './policies/compose.js';
export { constant, type Delay, exponential, type RandomSource } from './policies/delays.js';
export { type FallbackOptions, type FallbackPolicy, fallback } from './policies/fallback.js';
export { type HedgeOptions, type HedgePolicy, hedge } from './policies/hedge.js';
export type { Disposable, Policy } from './policies/policy.js';
export { type RateLimiterOptions, type RateLimiterPolicy, rateLimiter } from './policies/rate-limiter.js';
export { type RetryOptions, type RetryPolicy, retry } from './policies/retry.js';
export {
  type RetryBudget,
  type RetryBudgetDeniedEvent,
  type RetryBudgetOptions,
  retryBudget,
} from './policies/retry-budget.js';
export { sleep } from './policies/sleep.js';
export { type TimeoutOptions, type TimeoutPolicy, timeout } from './policies/timeout.js';
export type { JsonSchemaInput, SchemaLike } from './schemas/schema.js';
export type {
  ContentPart,
  FinishReason,
  Message,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ToolCall,
  Usage,
} from './spec/model.js';
export type {
  CorrectionEventKind,
  DependencyKind,
  RunAnnotations,
  RunEvent,
  RunEventListener,
  RunEventType,
} from './spec/run-events.js';
export type {
  CancellationRequest,
  LedgerEntry,
  RunRecord,
  RunStatus,
  RunStore,
  RunSummary,
  SessionRecord,
} from './spec/run-store.js';
export type {
  ApprovalCheck,
  ReconcileContext,
  ReconcileResult,
  Tool,
  ToolContext,
  ToolDegradation,
  ToolFallback,
  ToolFallbackContext,
  ToolProgress,
  ToolReconcile,
  ToolResult,
  ToolSource,
  ValidationResult,
} from './spec/tool.js';
export { MemoryRunStore } from './store/memory-run-store.js';
