import type { ErrorCode } from '../errors/codes.js';
import type { BreakerTransition as PolicyBreakerTransition } from '../policies/breaker/breaker-store.js';
import type { CircuitBreaker } from '../policies/circuit-breaker.js';
import type { Clock } from '../policies/clock.js';
import type { Delay, RandomSource } from '../policies/delays.js';
import type { EventEmitter } from '../policies/events.js';
import type { RetryPolicy } from '../policies/retry.js';
import type { RetryBudget } from '../policies/retry-budget.js';
import type { TimeoutPolicy } from '../policies/timeout.js';
import type { ModelProvider, ToolDefinition } from '../spec/model.js';
import type { Tool } from '../spec/tool.js';
import type { RunAbort } from './cancellation.js';
import type { ConversationManager } from './conversation/manager.js';
import type { CorrectionLimits, CorrectionTracker } from './correction-tracker.js';
import type { DurabilitySettings } from './durability.js';
import type { DurableRun } from './durable-run.js';
import type { DependencyKind, RunEvent, RunEventSink } from './events.js';
import type { Guardrail, GuardrailFinding } from './guardrails/guardrail.js';
import type { ResolvedLimits } from './limits.js';
import { countError } from './report.js';
import type { CheckpointHook, RunState, RunTransition } from './run-state.js';
import type { StructuredOutput } from './structured-output.js';

/** A dependency the agent guards with a breaker and a timeout: one model of the chain, or one tool. */
interface GuardedSlot {
  /** `provider/model`, or the tool's name. */
  readonly key: string;
  readonly kind: DependencyKind;
  /** Kept on the agent, so that it spans runs. Undefined when breakers are switched off. */
  readonly breaker: CircuitBreaker | undefined;
  readonly timeout: TimeoutPolicy;
  /** The runs that called this dependency and are still going: they record its breaker's moves. */
  readonly watchers: Set<RunContext>;
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
}

/** How the loop retries: the agent's `retry` option, resolved. */
export interface RetrySettings {
  readonly modelMaxAttempts: number;
  readonly toolMaxAttempts: number;
  readonly delay: Delay | undefined;
  readonly random: RandomSource | undefined;
  readonly maxRetryAfterMs: number;
  readonly maxElapsedMs: number | undefined;
  /** Makes the run's own budget. */
  readonly createRunBudget: (clock: Clock) => RetryBudget;
  /** A budget shared beyond the run (the process, say); every retry draws from both. */
  readonly sharedBudget: RetryBudget | undefined;
}

/** Everything a run needs from its agent: resolved once, when the agent is made, and shared by all its runs. */
export interface AgentRuntime {
  readonly name: string;
  readonly models: readonly ModelSlot[];
  readonly tools: ReadonlyMap<string, ToolSlot>;
  readonly toolNames: readonly string[];
  readonly toolDefinitions: ToolDefinition[] | undefined;
  readonly limits: ResolvedLimits;
  readonly retry: RetrySettings;
  readonly clock: Clock;
  readonly events: EventEmitter<RunEvent>;
  readonly instructions: string | undefined;
  readonly guardrails: readonly Guardrail[];
  readonly hasGuardrails: { readonly input: boolean; readonly output: boolean; readonly toolCall: boolean };
  readonly output: StructuredOutput<unknown> | undefined;
  readonly conversation: ConversationManager | undefined;
  readonly corrections: CorrectionLimits;
  readonly onMaxTokens: 'fail' | 'continue';
  readonly maxToolResultChars: number;
  readonly maxOutputTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly checkpoint: CheckpointHook | undefined;
  /** The run store and how runs use it; undefined when runs are not durable. */
  readonly durability: DurabilitySettings | undefined;
}

/**
 * One run's working set: its state (JSON, checkpointed) and what is not state (its abort switch, event sink, retry
 * budget and policies). Made at the start of a run, dropped at its end.
 */
export class RunContext {
  /** The correction tracker, made at the first invalid call. */
  tracker: CorrectionTracker | undefined;
  /** Whether a text delta of the current model call reached the caller: from then on the call is not retried. */
  deltaDelivered = false;
  /** The current model call's streamed text, for the error's `partialOutput`. */
  streamedText = '';
  /** The run's model retry policy, made at its first model call. */
  modelRetry: RetryPolicy | undefined;
  /** The run's tool retry policies by tool name, made at each tool's first call. */
  toolRetries: Map<string, RetryPolicy> | undefined;
  /** The model being called, for retry events. */
  currentModel: ModelSlot | undefined;
  /** Handed to providers as `onTextDelta` when the caller streams. */
  readonly deltaListener: ((delta: string) => void) | undefined;
  /** Whether transitions are checkpointed at all (a hook or a store): the loop skips the calls otherwise. */
  readonly checkpoints: boolean;
  private readonly watching: GuardedSlot[] = [];
  private counted: WeakSet<object> | undefined;

  constructor(
    readonly agent: AgentRuntime,
    readonly state: RunState,
    readonly abort: RunAbort,
    readonly events: RunEventSink,
    readonly budget: RetryBudget,
    readonly onTextDelta: ((delta: string) => void) | undefined,
    /** Saves the run to its store; undefined when the run is not durable. */
    readonly durable?: DurableRun,
  ) {
    this.checkpoints = durable !== undefined || agent.checkpoint !== undefined;
    this.deltaListener =
      onTextDelta === undefined ? undefined : (delta) => this.deliverDelta(onTextDelta, delta);
  }

  private deliverDelta(listener: (delta: string) => void, delta: string): void {
    this.deltaDelivered = true;
    this.streamedText += delta;
    try {
      listener(delta);
    } catch (error) {
      process.emitWarning(`keel: an onTextDelta callback threw: ${String(error)}`);
    }
    if (this.events.active) {
      this.events.emit({
        type: 'text-delta',
        runId: this.runId,
        atMs: this.clock.now(),
        step: this.state.step,
        delta,
      });
    }
  }

  get runId(): string {
    return this.state.runId;
  }

  get clock(): Clock {
    return this.agent.clock;
  }

  /** Checkpoints a transition: to the store (after the hook) when durable, else through the hook alone. */
  checkpoint(transition: RunTransition): void | PromiseLike<void> {
    if (this.durable !== undefined) return this.durable.save(transition);
    const hook = this.agent.checkpoint;
    return hook === undefined ? undefined : hook(transition, this.state);
  }

  /** Counts a failure the run met, once per error object. */
  countError(error: { code: ErrorCode }): void {
    this.counted ??= new WeakSet();
    if (this.counted.has(error)) return;
    this.counted.add(error);
    countError(this.state.report, error.code);
  }

  /** From now until the run ends, records the moves of this dependency's breaker. */
  watch(slot: GuardedSlot): void {
    if (slot.breaker === undefined || slot.watchers.has(this)) return;
    slot.watchers.add(this);
    this.watching.push(slot);
  }

  /** A breaker this run watches moved. */
  breakerMoved(slot: GuardedSlot, transition: PolicyBreakerTransition): void {
    const to = transition.to === 'isolated' ? 'open' : transition.to;
    this.state.report.breakerTransitions.push({
      atMs: transition.atMs,
      target: slot.kind,
      name: slot.key,
      to,
    });
    if (this.events.active) {
      const type =
        to === 'open' ? 'breaker-opened' : to === 'closed' ? 'breaker-closed' : 'breaker-half-opened';
      this.events.emit({ type, runId: this.runId, atMs: transition.atMs, target: slot.kind, name: slot.key });
    }
  }

  /** A guardrail blocked or redacted something. */
  guardrailTripped(finding: GuardrailFinding): void {
    this.state.report.guardrailsTripped++;
    if (this.events.active) {
      this.events.emit({
        type: 'guardrail-tripped',
        runId: this.runId,
        atMs: this.clock.now(),
        stage: finding.stage,
        guardrail: finding.guardrail,
        action: finding.action,
        trigger: finding.trigger,
      });
    }
  }

  /** Leaves every breaker's watch list and releases the abort switch. */
  dispose(): void {
    for (const slot of this.watching) slot.watchers.delete(this);
    this.watching.length = 0;
    this.abort.dispose();
  }
}
