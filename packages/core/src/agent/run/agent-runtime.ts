import type { KeelError } from '../../errors/keel-error.js';
import type { Governance } from '../../governance/governance.js';
import type { TenantGate } from '../../governance/tenant-limits.js';
import type { BreakerTransition } from '../../policies/breaker/breaker-store.js';
import type { CircuitBreaker } from '../../policies/circuit-breaker.js';
import type { Clock } from '../../policies/clock.js';
import type { DeadlineQueue } from '../../policies/deadline-queue.js';
import type { Emitter } from '../../policies/events.js';
import type { RetryPolicy } from '../../policies/retry.js';
import type { RetryBudget } from '../../policies/retry-budget.js';
import type { TimeoutPolicy } from '../../policies/timeout.js';
import type { ModelProvider, ToolChoice, ToolDefinition } from '../../spec/model.js';
import type { DependencyKind, RunEvent } from '../../spec/run-events.js';
import type { Tool, ToolFallback } from '../../spec/tool.js';
import type { ConversationManager } from '../conversation/manager.js';
import type { CorrectionLimits } from '../correction/correction-tracker.js';
import type { StructuredOutput } from '../correction/structured-output.js';
import type { Guardrail } from '../guardrails/guardrail.js';
import type { DurabilitySettings } from './durability.js';
import type { ResolvedLimits } from './limits.js';
import type { CheckpointHook, RunTransition } from './run-state.js';
import type { StopReason } from './stop-reason.js';

/*
 * What an agent resolves to and what its runs link to: types only, shared by the setup (resolve-agent,
 * agent-dependencies), the loop and durability, so that none of them needs to import another's implementation.
 */

/** A run that records the moves of a dependency's breaker while it goes on (a run context). */
export interface BreakerWatcher {
  breakerMoved(slot: GuardedSlot, transition: BreakerTransition): void;
}

/** A dependency the agent guards with a breaker and a timeout: one model of the chain, or one tool. */
export interface GuardedSlot {
  /** `provider/model`, or the tool's name. */
  readonly key: string;
  readonly kind: DependencyKind;
  /** Kept on the agent, so that it spans runs. Undefined when breakers are switched off. */
  readonly breaker: CircuitBreaker | undefined;
  readonly timeout: TimeoutPolicy;
  /** The runs that called this dependency and are still going: they record its breaker's moves. */
  readonly watchers: Set<BreakerWatcher>;
}

/** One model of the chain (primary first). */
export interface ModelSlot extends GuardedSlot {
  readonly kind: 'model';
  readonly provider: ModelProvider;
}

/** One tool. */
export interface ToolSlot extends GuardedSlot {
  readonly kind: 'tool';
  readonly tool: Tool;
  /** The tool's fallbacks, in order; empty when it has none. */
  readonly fallbacks: readonly FallbackSlot[];
}

/**
 * One fallback of a tool, resolved: a fallback tool gets a slot (its breaker and timeout; the agent's own slot when
 * the agent also offers that tool to the model), a value fallback is run as it is.
 */
export interface FallbackSlot {
  /** `degraded.to`: the fallback tool's name, or the value fallback's. */
  readonly name: string;
  readonly fallback: ToolFallback;
  /** Set for a fallback tool. */
  readonly slot: ToolSlot | undefined;
}

/** How the loop retries: the agent's `retry` option, resolved. */
export interface RetrySettings {
  /** Makes a run's model retry policy, on the run's budget, with the run's `retryIf` (options checked once). */
  readonly makeModelRetry: (budget: RetryBudget, retryIf: (error: KeelError) => boolean) => RetryPolicy;
  /** Makes a run's retry policy for one tool (options checked once). */
  readonly makeToolRetry: (budget: RetryBudget, retryIf: (error: KeelError) => boolean) => RetryPolicy;
  /** The longest a run waits, all waits together, for an open breaker of its last model to let a probe through. */
  readonly waitForOpenBreakerMs: number;
  /** The longest Retry-After a run waits for (`retry.maxRetryAfterMs`). */
  readonly maxRetryAfterMs: number;
  /** Makes the run's own budget (options checked once). */
  readonly createRunBudget: () => RetryBudget;
  /** A budget shared beyond the run (the process, say); every retry draws from both. */
  readonly sharedBudget: RetryBudget | undefined;
}

/**
 * The agent's tools when some come from tool sources (`ToolSource`): the runtime's `tools`, `toolNames` and
 * `toolDefinitions` are brought up to date through it.
 */
export interface ToolCatalog {
  /** Whether a source's version moved since the tools were last updated. Cheap: read before every model step. */
  readonly stale: boolean;
  /**
   * Lists the sources whose version moved and updates the runtime's tools (joins an update in flight). Rejects when a
   * source that has never listed cannot list.
   */
  update(): Promise<void>;
}

/**
 * What a run does with a repeat of a call whose outcome is unknown (a call of a tool that is not idempotent that timed
 * out or lost its connection after it may have taken effect), when the tool has no `reconcile` or it could not tell:
 * `interrupt` ends the run `interrupted` (stop reason `decision_required`) with an `uncertain` decision pending for
 * the repeat, answered as after a crash (`resume` with `decisions: { [key]: 'execute' | 'abandon' }`); `refuse` does
 * not run the repeat, tells the model so (a `tool.outcome_unknown` error) and the run goes on.
 */
export type UncertainCallPolicy = 'interrupt' | 'refuse';

/** Everything a run needs from its agent: resolved once, when the agent is made, and shared by all its runs. */
export interface AgentRuntime {
  readonly name: string;
  readonly models: readonly ModelSlot[];
  /** The tools offered now (updated through `toolCatalog` when the agent has tool sources). */
  readonly tools: ReadonlyMap<string, ToolSlot>;
  readonly toolNames: readonly string[];
  readonly toolDefinitions: ToolDefinition[] | undefined;
  /** Set when the agent has tool sources: the loop updates the tools through it before each model step. */
  readonly toolCatalog: ToolCatalog | undefined;
  /** Every breaker the agent made, by name (`provider/model`, `tool:<name>`). */
  readonly breakers: ReadonlyMap<string, CircuitBreaker>;
  readonly limits: ResolvedLimits;
  readonly retry: RetrySettings;
  readonly clock: Clock;
  readonly events: Emitter<RunEvent>;
  /** The deadlines (`limits.timeoutMs`) of the agent's runs in progress, served by one timer. */
  readonly runDeadlines: DeadlineQueue;
  readonly instructions: string | undefined;
  readonly guardrails: readonly Guardrail[];
  readonly hasGuardrails: { readonly input: boolean; readonly output: boolean; readonly toolCall: boolean };
  readonly output: StructuredOutput<unknown> | undefined;
  readonly conversation: ConversationManager | undefined;
  readonly corrections: CorrectionLimits;
  readonly onMaxTokens: 'fail' | 'continue';
  readonly maxToolResultChars: number;
  readonly uncertainCalls: UncertainCallPolicy;
  readonly maxOutputTokens: number | undefined;
  readonly temperature: number | undefined;
  /** The agent's `toolChoice`; a run's own, and its reset to `auto`, live in the run state. */
  readonly toolChoice: ToolChoice | undefined;
  /** Streamed calls: the stall timeouts handed to providers, and whether a broken stream is recovered. */
  readonly stream: {
    readonly firstByteTimeoutMs: number;
    readonly idleTimeoutMs: number;
    readonly recovery: boolean;
  };
  readonly checkpoint: CheckpointHook | undefined;
  /** Places of each tenant's runs (`tenants`); undefined when the agent limits none. */
  readonly tenants: TenantGate | undefined;
  /** The run store and how runs use it; undefined when runs are not durable. */
  readonly durability: DurabilitySettings | undefined;
  /** Prices and budgets (`prices`, `budgets`). */
  readonly governance: Governance;
}

/** Why a durable run had to stop: it can no longer save its state. */
export interface DurableHalt {
  readonly stopReason: Extract<StopReason, 'store_unavailable' | 'lease_lost' | 'paused'>;
  readonly error: KeelError;
}

/** What a run context uses of its durable run (a `DurableRun`): saving transitions, and whether saving stopped. */
export interface DurableLink {
  /** Set once the run can no longer be saved. */
  readonly halted: DurableHalt | undefined;
  save(transition: RunTransition): Promise<void>;
  /**
   * Writes what waits for the next write (an idempotent call's start) and resolves once every write so far is saved:
   * a child run starts only after the parent's call that starts it is in the store.
   */
  saved(): Promise<void>;
}
