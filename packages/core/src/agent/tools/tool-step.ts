import type { Message } from '../../spec/model.js';
import { interruptionError, type PendingDecision, pendingDecisionOf } from '../run/pending-decision.js';
import type { RunContext } from '../run/run-context.js';
import type { PendingToolCall } from '../run/run-state.js';
import { renderToolResult } from '../run/tool-result.js';
import { CONTINUE, runToolCall, type ToolStepOutcome } from './tool-execution.js';
import { reconcileStartedCall } from './uncertain-calls.js';

/**
 * Runs the step's pending tool calls, at most `limits.maxParallelToolCalls` at once, each call's result landing in
 * its pending entry (so results keep the model's order whatever order calls finish in). Calls already completed (a
 * resumed step) are skipped. Once a call stops, fails or interrupts the run, no further call starts; calls already
 * running finish (each is bounded by its timeout). Cancellation rejects with the run's abort reason.
 *
 * A resumed step may hold a call that completed with a stop directive (the process died before the run's end was
 * saved): the run stops as the tool asked, and nothing else runs. It may hold calls that started and never completed:
 * they may or may not have run. Those of idempotent tools (or that the user chose to `execute`) run again, with the
 * same idempotency key; so do those whose tool's `reconcile` says they did not take effect (those it says did are
 * completed with its output); if any other is left, the run is interrupted before anything runs, with a decision
 * pending for each.
 */
export async function runToolCalls(run: RunContext): Promise<ToolStepOutcome> {
  const calls = run.state.pendingToolCalls;
  // Only a resumed step holds calls that completed or started: a fresh one skips both checks (and their promise).
  let resumed = false;
  for (const call of calls) {
    if (call.status === 'completed' && call.stop !== undefined) return { kind: 'stop', stop: call.stop };
    if (call.status === 'started') resumed = true;
  }
  if (resumed) {
    const uncertain = await undecidedCalls(run, calls);
    if (uncertain !== undefined) return uncertain;
  }
  const parallel = run.agent.limits.maxParallelToolCalls;
  if (calls.length === 1 || parallel === 1) {
    for (const call of calls) {
      if (call.status === 'completed') continue;
      const outcome = await runToolCall(run, call);
      if (outcome !== CONTINUE) return outcome;
    }
    return CONTINUE;
  }
  let next = 0;
  let ending: ToolStepOutcome = CONTINUE;
  const worker = async (): Promise<void> => {
    while (ending === CONTINUE && next < calls.length) {
      const call = calls[next++]!;
      if (call.status === 'completed') continue;
      const outcome = await runToolCall(run, call);
      if (outcome !== CONTINUE && ending === CONTINUE) ending = outcome;
    }
  };
  const workers: Promise<void>[] = [];
  for (let index = 0; index < Math.min(parallel, calls.length); index++) workers.push(worker());
  await Promise.all(workers);
  return ending;
}

/**
 * Calls that may have run and cannot run again without the user's say, as an interruption; undefined if none. A
 * tool's `reconcile` is asked first: a call it settles needs no decision.
 */
async function undecidedCalls(
  run: RunContext,
  calls: readonly PendingToolCall[],
): Promise<ToolStepOutcome | undefined> {
  let pending: PendingDecision[] | undefined;
  for (const call of calls) {
    if (call.status !== 'started' || call.decision === 'execute') continue;
    if (run.agent.tools.get(call.call.name)?.tool.idempotent === true) continue;
    if (await reconcileStartedCall(run, call)) continue;
    pending ??= [];
    pending.push(pendingDecisionOf('uncertain', call, run.state.step));
  }
  if (pending === undefined) return undefined;
  return {
    kind: 'interrupt',
    stopReason: 'decision_required',
    error: interruptionError(run.runId, pending),
    pending,
  };
}

/** The step's tool messages, in the model's call order. */
export function toolMessages(run: RunContext): Message[] {
  const options = { maxChars: run.agent.maxToolResultChars };
  const messages: Message[] = [];
  for (const pending of run.state.pendingToolCalls) {
    if (pending.result === undefined) continue;
    const rendered = renderToolResult(pending.result, options);
    const message: Message = {
      role: 'tool',
      toolCallId: pending.call.id,
      toolName: pending.call.name,
      content: rendered.content,
    };
    if (rendered.isError) message.isError = true;
    messages.push(message);
  }
  return messages;
}
