import type { ErrorCode } from '../../errors/codes.js';
import { messageOf } from '../../errors/error-chain.js';
import type { BreakerTransition as PolicyBreakerTransition } from '../../policies/breaker/breaker-store.js';
import type { Clock } from '../../policies/clock.js';
import type { RetryPolicy } from '../../policies/retry.js';
import type { RetryBudget } from '../../policies/retry-budget.js';
import type { ModelRequest } from '../../spec/model.js';
import type { CorrectionTracker } from '../correction/correction-tracker.js';
import type { GuardrailFinding } from '../guardrails/guardrail.js';
import type { AgentRuntime, BreakerWatcher, DurableLink, GuardedSlot, ModelSlot } from './agent-runtime.js';
import type { RunAbort } from './cancellation.js';
import type { ForwardedAnswers } from './child-runs.js';
import type { RunEventSink } from './event-sink.js';
import { countError, streamRecoveryCountsOf } from './report.js';
import type { RunState, RunTransition } from './run-state.js';
import { StepText, type StreamRecovery } from './step-text.js';
import { streamLinkOf } from './stream-parts.js';

/**
 * One run's working set: its state (JSON, checkpointed) and what is not state (its abort switch, event sink, retry
 * budget and policies). Made at the start of a run, dropped at its end.
 */
export class RunContext implements BreakerWatcher {
  /** The correction tracker, made at the first invalid call. */
  tracker: CorrectionTracker | undefined;
  /** The current model step's text as the caller received it, across attempts (see {@link StepText}). */
  readonly stepText = new StepText();
  /** The run's model retry policy, made at its first model call. */
  modelRetry: RetryPolicy | undefined;
  /** The run's tool retry policies by tool name, made at each tool's first call. */
  toolRetries: Map<string, RetryPolicy> | undefined;
  /** The model being called, for retry events. */
  currentModel: ModelSlot | undefined;
  /** Answers the run's `resume` was given for its children's pending calls, passed down to them (see `ParentRunHandle`). */
  childAnswers: ForwardedAnswers | undefined;
  /** Handed to providers as `onTextDelta` when the caller streams. */
  readonly deltaListener: ((delta: string) => void) | undefined;
  /** Handed to providers as `onStreamPart` when the run streams through `agent.stream()`. */
  readonly streamPartListener: ModelRequest['onStreamPart'];
  /** Waited for before each step when the run streams through `agent.stream()` (its reader's back-pressure). */
  readonly beforeStep: (() => Promise<void> | undefined) | undefined;
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
    readonly durable?: DurableLink,
  ) {
    this.checkpoints = durable !== undefined || agent.checkpoint !== undefined;
    this.deltaListener =
      onTextDelta === undefined ? undefined : (delta) => this.deliverDelta(onTextDelta, delta);
    const link = streamLinkOf(onTextDelta);
    this.streamPartListener = link?.onStreamPart;
    this.beforeStep = link?.beforeStep;
  }

  /** Whether text of the current model step reached the caller. */
  get deltaDelivered(): boolean {
    return this.stepText.delivered !== '';
  }

  /** The current model step's text the caller holds, for an error's `partialOutput`. */
  get streamedText(): string {
    return this.stepText.delivered;
  }

  /** The current attempt answered: settles a recovery its text left open (see {@link StepText.finishAttempt}). */
  finishAttempt(): void {
    if (this.onTextDelta === undefined) return;
    const { deliver, recovery } = this.stepText.finishAttempt();
    if (recovery !== undefined) this.streamRecovered(recovery);
    if (deliver !== '') this.sendDelta(this.onTextDelta, deliver);
  }

  private deliverDelta(listener: (delta: string) => void, delta: string): void {
    const { deliver, recovery } = this.stepText.accept(delta);
    if (recovery !== undefined) this.streamRecovered(recovery);
    if (deliver !== '') this.sendDelta(listener, deliver);
  }

  /** Counts a recovered stream and emits `stream-recovered`. */
  private streamRecovered(recovery: StreamRecovery): void {
    const counts = streamRecoveryCountsOf(this.state.report);
    counts.total++;
    counts[recovery.mode]++;
    if (this.events.active) {
      this.events.emit({
        type: 'stream-recovered',
        runId: this.runId,
        atMs: this.clock.now(),
        step: this.state.step,
        errorCode: recovery.errorCode,
        mode: recovery.mode,
        keptCharacters: recovery.keptCharacters,
        model: this.currentModel?.key ?? '',
      });
    }
  }

  private sendDelta(listener: (delta: string) => void, delta: string): void {
    try {
      listener(delta);
    } catch (error) {
      process.emitWarning(`keel: an onTextDelta callback threw: ${messageOf(error)}`);
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
