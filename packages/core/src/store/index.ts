// `@keel/core/store`: what a store implementer needs beside the contracts of `@keel/core` (`RunStore`): the run
// store's write shapes, SQL row mappers, the conflict errors every store raises alike, and the contracts and in-memory
// versions of the breaker, rate limiter and retry budget stores. The run store contract suite is in
// `@keel/core/testing`. Explicit exports only; `surface/store.txt` lists them.

export {
  type BudgetAdjustment,
  type BudgetCounter,
  type BudgetReservation,
  type BudgetStore,
  type MemoryBudgetStoreOptions,
  memoryBudgetStore,
} from '../governance/budget-store.js';
export { memoryPaceStore } from '../governance/pace-governor.js';
export type { PaceRequest, PaceStore } from '../governance/pace-store.js';
export type {
  BreakerAdmission,
  BreakerOutcome,
  BreakerRejection,
  BreakerRules,
  BreakerStore,
  BreakerStoreFactory,
  BreakerStoreOptions,
  BreakerTicket,
  BreakerTransitionReason,
  ClosedTicket,
  ProbeTicket,
} from '../policies/breaker/breaker-store.js';
export { MemoryBreakerStore } from '../policies/breaker/in-memory-breaker-store.js';
export type { BreakerSnapshot, BreakerState } from '../policies/breaker/snapshot.js';
export { memoryRateLimiterStore } from '../policies/in-memory-rate-limiter-store.js';
export { memoryRetryBudgetStore, RETRY_BUDGET_SLOTS } from '../policies/in-memory-retry-budget-store.js';
export type {
  RateLimiterGrant,
  RateLimiterStore,
  RateLimiterStoreFactory,
  RateLimiterStoreOptions,
} from '../policies/rate-limiter-store.js';
export type { RetryBudgetDenial } from '../policies/retry-budget.js';
export type {
  RetryBudgetCounts,
  RetryBudgetLimits,
  RetryBudgetStore,
  RetryBudgetStoreFactory,
  RetryBudgetStoreOptions,
} from '../policies/retry-budget-store.js';
export type {
  CheckpointWrite,
  JournalLogWrite,
  Lease,
  MessageLogWrite,
  NewRun,
  RanToolCall,
  SessionAppend,
  SessionClaim,
  SessionSummary,
  StartedToolCall,
  StepCommit,
  StepCreate,
} from '../spec/run-store.js';
export {
  checkpointConflict,
  leaseConflict,
  messageLogGap,
  runNotFound,
  toolCallNotStarted,
} from '../store/conflicts.js';
export { journalEndAfter, journalTextsOf, putJournalBack } from '../store/journal-log.js';
export {
  checkNewRunLog,
  createdRecord,
  messageCountAfter,
  messageTextsOf,
  stateWithMessages,
} from '../store/message-log.js';
export { type SessionHead, sessionAppendConflict, sessionClaimConflict } from '../store/session-conflicts.js';
export {
  SESSION_COLUMNS,
  type SessionRow,
  type SessionTurnRow,
  sessionSummaryFromRow,
  sessionTurnFromRow,
} from '../store/session-rows.js';
export {
  type LedgerRow,
  ledgerEntryFromRow,
  RUN_SUMMARY_COLUMNS,
  type RunRow,
  runRecordFromRow,
  runSummaryFromRow,
} from '../store/sql-rows.js';
