import { isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';
import { isPromiseLike } from '../../policies/promise.js';
import type { CorrectionEventKind } from '../../spec/run-events.js';
import type { ToolResult } from '../../spec/tool.js';
import { mismatchedArgumentsError, parseToolArguments, unknownToolError } from '../correction/correction.js';
import { CorrectionTracker } from '../correction/correction-tracker.js';
import { runToolCallGuardrails } from '../guardrails/guardrail.js';
import { isChildInterruption } from '../run/child-runs.js';
import { isRetryStep, isStopRun, type ToolStop } from '../run/directives.js';
import {
  interruptionError,
  type PendingDecision,
  pendingDecisionOf,
  rejectedResult,
} from '../run/pending-decision.js';
import { countCorrection, countToolCall } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import { type PendingToolCall, recordToolCallCompleted, recordToolCallStarted } from '../run/run-state.js';
import { toolError, toolSuccess } from '../run/tool-result.js';
import { executeWithFallbacks } from './fallback-call.js';
import { executeTool, toolFailure } from './tool-call.js';
import { checkRepeat, outcomeIsUnknown, recordUnknownOutcome } from './uncertain-calls.js';

/**
 * How a step's tool calls ended for the loop: go on, stop as asked, or end the run (failed, or interrupted for
 * decisions: approvals, or calls that may have run).
 */
export type ToolStepOutcome =
  | { readonly kind: 'continue' }
  | { readonly kind: 'stop'; readonly stop: ToolStop }
  | { readonly kind: 'fail'; readonly error: KeelError }
  | {
      readonly kind: 'interrupt';
      readonly stopReason: 'approval_required' | 'decision_required';
      readonly error: KeelError;
      readonly pending: readonly PendingDecision[];
    };

/** The outcome of a call (or step) after which the step goes on. */
export const CONTINUE: ToolStepOutcome = Object.freeze({ kind: 'continue' });

/**
 * Runs one pending call: the tool-call guardrails, argument parsing and validation (an invalid call goes back to the
 * model as a correction), the approval check (a call that needs approval and has none interrupts the run), then the
 * call itself, checkpointed as started before it runs and as completed, with its result, after. Cancellation rejects
 * with the run's abort reason.
 */
export async function runToolCall(run: RunContext, pending: PendingToolCall): Promise<ToolStepOutcome> {
  const { agent, abort } = run;
  if (abort.aborted) throw abort.signal.reason;
  const call = pending.call;
  const slot = agent.tools.get(call.name);
  if (slot === undefined)
    return correct(run, pending, 'unknown_tool', unknownToolError(call.name, agent.toolNames));

  let argumentsText = call.arguments;
  if (agent.hasGuardrails.toolCall) {
    const checked = await runToolCallGuardrails(agent.guardrails, call, {
      runId: run.runId,
      step: run.state.step,
      signal: abort.signal,
    });
    for (const finding of checked.findings) run.guardrailTripped(finding);
    if (checked.action === 'block') {
      run.countError(checked.error);
      return complete(run, pending, toolError(checked.error));
    }
    argumentsText = checked.text;
  }

  const parsed = parseToolArguments(call.name, argumentsText);
  if (!parsed.success) return correct(run, pending, 'malformed_json', parsed.error);
  let validation: Awaited<ReturnType<typeof slot.tool.validate>>;
  try {
    // Awaited only when asynchronous: most schemas validate at once.
    const validating = slot.tool.validate(parsed.value);
    validation = isPromiseLike(validating) ? await validating : validating;
  } catch (thrown) {
    if (isControlSignal(thrown)) throw thrown;
    return complete(run, pending, failed(run, toolFailure(thrown, call.name)));
  }
  if (!validation.success)
    return correct(run, pending, 'invalid_arguments', mismatchedArgumentsError(slot.tool, validation.issues));
  if (run.tracker !== undefined) forgetFailures(run, call.name);

  if (slot.tool.needsApproval !== undefined && slot.tool.needsApproval !== false) {
    let needed: boolean;
    try {
      needed = slot.tool.needsApproval === true || (await slot.tool.needsApproval(validation.value));
    } catch (thrown) {
      // A check that fails is the tool's fault, shown to the model like any tool failure; the call does not run.
      if (isControlSignal(thrown)) throw thrown;
      return complete(run, pending, failed(run, toolFailure(thrown, call.name)));
    }
    if (needed) {
      const answer = pending.approval;
      if (answer === undefined) return approvalRequired(run, pending);
      if (!answer.approved) {
        run.countError({ code: 'tool.rejected' });
        return complete(run, pending, rejectedResult(call.name, answer.reason));
      }
    }
  }

  if (!slot.tool.idempotent && run.state.uncertainCalls !== undefined) {
    const verdict = await checkRepeat(run, slot, pending, validation.value);
    if (verdict.kind === 'answer') return complete(run, pending, verdict.result);
    if (verdict.kind === 'interrupt') return decisionRequired(run, pending, verdict.repeatOf);
  }

  // A run cancelled while its checks ran (a slow approval check, say) is over: the call must not start.
  if (abort.aborted) throw abort.signal.reason;
  recordToolCallStarted(pending);
  if (run.checkpoints) await run.checkpoint({ kind: 'tool-call-started', ...transitionOf(run, pending) });
  if (abort.aborted) throw abort.signal.reason;
  const startedMs = run.events.active ? run.clock.now() : 0;
  if (run.events.active) {
    run.events.emit({
      type: 'tool-call-start',
      runId: run.runId,
      atMs: startedMs,
      step: run.state.step,
      callIndex: pending.callIndex,
      toolName: call.name,
      idempotencyKey: pending.idempotencyKey,
      toolCallId: call.id,
      arguments: argumentsText,
    });
  }
  let result: ToolResult;
  let stop: ToolStop | undefined;
  try {
    if (slot.fallbacks.length === 0) {
      result = toolSuccess(await executeTool(run, slot, pending, validation.value));
    } else {
      const outcome = await executeWithFallbacks(run, slot, pending, validation.value, parsed.value);
      result = toolSuccess(outcome.output, outcome.degraded);
    }
  } catch (thrown) {
    if (abort.aborted) throw abort.signal.reason;
    if (isStopRun(thrown)) {
      stop =
        thrown.output === undefined
          ? { reason: thrown.reason }
          : { reason: thrown.reason, output: thrown.output };
      result = toolSuccess({ stopRun: thrown.reason });
    } else if (isRetryStep(thrown)) {
      countCorrection(run.state.report, 'retry_step');
      emitCorrection(run, 'retry_step', call.name, thrown.guidance);
      result = {
        status: 'error',
        error: { name: 'RetryStep', message: 'The tool asked for this step to be done again' },
        guidance: thrown.guidance,
      };
    } else if (isChildInterruption(thrown)) {
      // The call stays started: resumed, it runs again with its key and resumes its child with the answers.
      return {
        kind: 'interrupt',
        stopReason: thrown.stopReason,
        error: interruptionError(run.runId, thrown.pending),
        pending: thrown.pending,
      };
    } else if (isControlSignal(thrown)) {
      throw thrown;
    } else {
      const error = KeelError.isInstance(thrown) ? thrown : toolFailure(thrown, call.name);
      if (!slot.tool.idempotent && outcomeIsUnknown(error)) {
        // The failure is counted as itself; the model is told the outcome is unknown, not that it may retry.
        run.countError(error);
        result = recordUnknownOutcome(run, pending, error);
      } else {
        result = failed(run, error);
      }
    }
  }
  countToolCall(run.state.report, call.name, result.status === 'error' ? result.error.code : undefined);
  if (run.events.active) {
    const atMs = run.clock.now();
    run.events.emit({
      type: 'tool-call-end',
      runId: run.runId,
      atMs,
      step: run.state.step,
      callIndex: pending.callIndex,
      toolName: call.name,
      idempotencyKey: pending.idempotencyKey,
      status: result.status,
      ...(result.status === 'error' && result.error.code !== undefined
        ? { errorCode: result.error.code }
        : {}),
      durationMs: atMs - startedMs,
      toolCallId: call.id,
      result,
    });
  }
  const completed = complete(run, pending, result, stop);
  if (stop === undefined) return completed;
  await completed;
  return { kind: 'stop', stop };
}

function failed(run: RunContext, error: KeelError): ToolResult {
  run.countError(error);
  return toolError(error);
}

/** Records a call's result; resolves once it is checkpointed (at once when the run is not checkpointed). */
function complete(
  run: RunContext,
  pending: PendingToolCall,
  result: ToolResult,
  stop?: ToolStop,
): ToolStepOutcome | Promise<ToolStepOutcome> {
  recordToolCallCompleted(pending, result, stop);
  if (!run.checkpoints) return CONTINUE;
  return Promise.resolve(run.checkpoint({ kind: 'tool-call-completed', ...transitionOf(run, pending) })).then(
    () => CONTINUE,
  );
}

/** An invalid call: its guidance goes back to the model, unless the tracker sees no progress. */
async function correct(
  run: RunContext,
  pending: PendingToolCall,
  kind: CorrectionEventKind,
  error: KeelError,
): Promise<ToolStepOutcome> {
  run.countError(error);
  run.tracker ??= new CorrectionTracker(run.agent.corrections, run.state.corrections);
  const decision = run.tracker.recordFailure({
    target: pending.call.name,
    text: pending.call.arguments,
    error,
  });
  run.state.corrections = run.tracker.toJSON();
  if (decision.action === 'stop') return { kind: 'fail', error: decision.error };
  countCorrection(run.state.report, kind);
  emitCorrection(run, kind, pending.call.name, error.message);
  return complete(run, pending, toolError(error));
}

function forgetFailures(run: RunContext, toolName: string): void {
  if (run.tracker === undefined || run.tracker.invalidCount === 0) return;
  run.tracker.recordSuccess(toolName);
  run.state.corrections = run.tracker.toJSON();
}

/** A repeat of a call whose outcome is unknown, with nothing to settle it: the run is interrupted before it runs. */
function decisionRequired(run: RunContext, pending: PendingToolCall, repeatOf: string): ToolStepOutcome {
  const decisions = [pendingDecisionOf('uncertain', pending, run.state.step, repeatOf)];
  return {
    kind: 'interrupt',
    stopReason: 'decision_required',
    error: interruptionError(run.runId, decisions),
    pending: decisions,
  };
}

/** A call that needs a human's approval, and has none yet: the run is interrupted before it runs. */
function approvalRequired(run: RunContext, pending: PendingToolCall): ToolStepOutcome {
  const decisions = [pendingDecisionOf('approval', pending, run.state.step)];
  return {
    kind: 'interrupt',
    stopReason: 'approval_required',
    error: interruptionError(run.runId, decisions),
    pending: decisions,
  };
}

function emitCorrection(run: RunContext, kind: CorrectionEventKind, toolName: string, message: string): void {
  if (!run.events.active) return;
  run.events.emit({
    type: 'correction',
    runId: run.runId,
    atMs: run.clock.now(),
    step: run.state.step,
    kind,
    toolName,
    message,
  });
}

function transitionOf(run: RunContext, pending: PendingToolCall) {
  return {
    step: run.state.step,
    callIndex: pending.callIndex,
    idempotencyKey: pending.idempotencyKey,
    toolName: pending.call.name,
  };
}
