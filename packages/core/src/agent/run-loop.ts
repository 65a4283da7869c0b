import { classify } from '../errors/classify.js';
import { type JsonValue, KeelError } from '../errors/keel-error.js';
import type { ModelResponse } from '../spec/model.js';
import { isStopRun } from './directives.js';
import { settleFinalAnswer } from './final-answer.js';
import { runGuardrails } from './guardrails/guardrail.js';
import { tokenBudgetError, turnLimitError } from './limits.js';
import { callModelChain } from './model-step.js';
import type { PendingDecision } from './pending-decision.js';
import type { RunContext } from './run-context.js';
import {
  beginStep,
  endRun,
  endStep,
  type RunTransition,
  recordModelResponse,
  type StopReason,
  stopReasonOf,
  type TerminalStatus,
} from './run-state.js';
import { runToolCalls, toolMessages } from './tool-execution.js';

/**
 * How a run ends. `output` is the run's output (the validated value with an output schema); `pending`, what an
 * interrupted run waits for.
 */
export interface RunEnding {
  readonly status: TerminalStatus;
  readonly stopReason: StopReason;
  readonly stopDetail?: string;
  readonly output?: unknown;
  readonly error?: KeelError;
  readonly pending?: readonly PendingDecision[];
}

/**
 * Drives a run from its state to a terminal state and never throws: every fault, limit and cancellation becomes a
 * {@link RunEnding}. The loop reads `state.phase` to know what comes next, so a run restored from a checkpoint goes on
 * from where it was saved (`fresh` is false then: `run-resumed` instead of `run-start`). Each transition is
 * checkpointed. Resolves with the ending as it was saved (see `finish`).
 */
export async function runLoop(run: RunContext, fresh: boolean): Promise<RunEnding> {
  let ending: RunEnding;
  try {
    if (fresh) await start(run);
    else await resumed(run);
    // A run cancelled before its loop starts never starts it: `advance` would fail with nobody left to listen.
    if (run.abort.signal.aborted) throw run.abort.signal.reason;
    ending = await untilAborted(advance(run), run);
  } catch (thrown) {
    ending = endingOf(run, thrown);
  }
  return finish(run, ending);
}

/**
 * Settles as `work` does, or rejects with the run's abort reason as soon as the run is cancelled or times out, so that
 * a callback that never returns (a hung validator, guardrail or tool that ignores its signal) cannot hold the run.
 */
function untilAborted<T>(work: Promise<T>, run: RunContext): Promise<T> {
  const signal = run.abort.signal;
  if (signal.aborted) {
    // The work goes on after the run has ended; its late failure has nobody to report to.
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function start(run: RunContext): Promise<void> {
  const { state } = run;
  if (run.events.active) {
    run.events.emit({
      type: 'run-start',
      runId: state.runId,
      atMs: state.startedAtMs,
      agentName: state.agentName,
    });
  }
  if (run.checkpoints) await checkpoint(run, { kind: 'run-started' });
}

async function resumed(run: RunContext): Promise<void> {
  const { state } = run;
  if (run.events.active) {
    run.events.emit({
      type: 'run-resumed',
      runId: state.runId,
      atMs: run.clock.now(),
      agentName: state.agentName,
      step: state.step,
    });
  }
  // A run resumed only to be cancelled goes straight to its end.
  if (run.checkpoints && !run.abort.aborted) await checkpoint(run, { kind: 'run-resumed', step: state.step });
}

async function advance(run: RunContext): Promise<RunEnding> {
  const { state, agent, abort } = run;
  if (state.step === 0 && state.phase === 'model' && agent.hasGuardrails.input) {
    const blocked = await checkInput(run);
    if (blocked !== undefined) return failed(blocked);
  }
  for (;;) {
    if (abort.aborted) throw abort.signal.reason;
    if (state.phase === 'tools') {
      const outcome = await runToolCalls(run);
      if (outcome.kind === 'stop') {
        const { reason, output } = outcome.directive;
        return { status: 'completed', stopReason: 'stop_requested', stopDetail: reason, output };
      }
      if (outcome.kind === 'fail') return failed(outcome.error);
      if (outcome.kind === 'interrupt') {
        const { stopReason, error, pending } = outcome;
        return { status: 'interrupted', stopReason, error, pending };
      }
      const toolCalls = state.pendingToolCalls.length;
      endStep(state, toolMessages(run), []);
      await endOfStep(run, toolCalls);
      continue;
    }
    if (state.phase === 'answer') {
      const settled = await settleFinalAnswer(run, answerOf(run));
      if (settled.kind === 'complete')
        return { status: 'completed', stopReason: 'final_answer', output: settled.output };
      if (settled.kind === 'fail') return failed(settled.error);
      state.phase = 'model';
      await endOfStep(run, 0);
      continue;
    }
    const limitError = tokenBudgetError(state, agent.limits) ?? turnLimitError(state, agent.limits);
    if (limitError !== undefined) return failed(limitError);
    beginStep(state);
    const response = await callModelChain(run);
    recordModelResponse(state, response);
    // Checked before the checkpoint, so that a resumed run never meets tool calls it must not run.
    if (response.toolCalls.length > 0) {
      // Tool calls cut at the token limit may carry truncated arguments: running them would act on half a request.
      if (response.finishReason === 'length') return failed(truncatedCallsError(run));
      // Spent past the budget: no tool runs on the strength of a step the run could not afford.
      const overBudget = tokenBudgetError(state, agent.limits);
      if (overBudget !== undefined) return failed(overBudget);
    }
    if (run.checkpoints) await checkpoint(run, { kind: 'model-response-received', step: state.step });
  }
}

/** The answer the `answer` phase settles: the last assistant message, with the finish reason it came with. */
function answerOf(run: RunContext): ModelResponse {
  const { state } = run;
  const last = state.messages[state.messages.length - 1];
  return {
    content: last?.role === 'assistant' ? last.content : '',
    toolCalls: [],
    finishReason: state.finishReason ?? 'stop',
    usage: { inputTokens: 0, outputTokens: 0 },
    model: run.agent.models[state.modelIndex]?.provider.model ?? '',
  };
}

async function endOfStep(run: RunContext, toolCalls: number): Promise<void> {
  const { state } = run;
  if (run.events.active) {
    run.events.emit({
      type: 'step-end',
      runId: state.runId,
      atMs: run.clock.now(),
      step: state.step,
      toolCalls,
    });
  }
  if (run.checkpoints) await checkpoint(run, { kind: 'step-ended', step: state.step });
}

function checkpoint(run: RunContext, transition: RunTransition): void | PromiseLike<void> {
  return run.checkpoint(transition);
}

/** Runs the input guardrails over the newest user message; a redaction replaces it in the conversation. */
async function checkInput(run: RunContext): Promise<KeelError | undefined> {
  const { state, agent } = run;
  let index = state.messages.length - 1;
  while (index >= 0 && state.messages[index]!.role !== 'user') index--;
  if (index < 0) return undefined;
  const message = state.messages[index]!;
  const checked = await runGuardrails(agent.guardrails, 'input', message.content, {
    runId: state.runId,
    step: 0,
    signal: run.abort.signal,
  });
  for (const finding of checked.findings) run.guardrailTripped(finding);
  if (checked.action === 'block') return checked.error;
  if (checked.text !== message.content) state.messages[index] = { role: 'user', content: checked.text };
  return undefined;
}

function failed(error: KeelError): RunEnding {
  return { status: 'failed', stopReason: stopReasonOf(error.code), error };
}

/** Turns whatever ended the loop by throwing into an ending: cancellation, run timeout, a fault. */
function endingOf(run: RunContext, thrown: unknown): RunEnding {
  const { abort } = run;
  if (abort.aborted && abort.cause === 'halted') {
    const halted = run.durable?.halted;
    const error = KeelError.isInstance(abort.signal.reason) ? abort.signal.reason : halted?.error;
    return { status: 'interrupted', stopReason: halted?.stopReason ?? 'store_unavailable', error };
  }
  if (abort.aborted) {
    const reason: unknown = abort.signal.reason;
    if (abort.cause === 'timeout' && KeelError.isInstance(reason)) return failed(reason);
    const error =
      KeelError.isInstance(reason) && reason.code === 'run.cancelled'
        ? reason
        : new KeelError('run.cancelled', `Run ${run.runId} was cancelled`, { cause: reason });
    return { status: 'cancelled', stopReason: 'cancelled', error };
  }
  if (isStopRun(thrown)) {
    return {
      status: 'completed',
      stopReason: 'stop_requested',
      stopDetail: thrown.reason,
      output: thrown.output,
    };
  }
  return failed(KeelError.isInstance(thrown) ? thrown : classify(thrown));
}

/**
 * Records the ending in the state and checkpoints it. When a durable run's store cannot save its end, the stored run
 * stays at its last good checkpoint, so the run ends `interrupted` (to be resumed) rather than claim an end the store
 * does not hold; a cancelled run stays cancelled. Resolves with the ending as it stands.
 */
async function finish(run: RunContext, reached: RunEnding): Promise<RunEnding> {
  const { state } = run;
  let ending = reached;
  if (ending.error !== undefined) run.countError(ending.error);
  recordEnding(run, ending);
  try {
    if (run.checkpoints) await checkpoint(run, { kind: 'run-ended', status: ending.status });
  } catch (error) {
    const halted = run.durable?.halted;
    if (halted !== undefined && ending.status !== 'interrupted' && ending.status !== 'cancelled') {
      ending = { status: 'interrupted', stopReason: halted.stopReason, error: halted.error };
      run.countError(halted.error);
      delete state.output;
      delete state.stopDetail;
      delete state.error;
      recordEnding(run, ending);
    } else {
      // The run is over either way; a hook that failed to save its end is reported, not allowed to change it.
      process.emitWarning(`keel: the checkpoint of run ${state.runId}'s end failed: ${String(error)}`);
    }
  }
  if (run.events.active) {
    run.events.emit({
      type: 'run-end',
      runId: state.runId,
      atMs: state.endedAtMs ?? run.clock.now(),
      status: ending.status,
      stopReason: ending.stopReason,
      durationMs: state.report.durationMs,
      ...(state.error === undefined ? {} : { error: state.error }),
    });
  }
  return ending;
}

function recordEnding(run: RunContext, ending: RunEnding): void {
  endRun(
    run.state,
    {
      status: ending.status,
      stopReason: ending.stopReason,
      ...(ending.stopDetail === undefined ? {} : { stopDetail: ending.stopDetail }),
      ...(ending.output === undefined ? {} : { output: ending.output as JsonValue }),
      ...(ending.error === undefined ? {} : { error: ending.error.toJSON() }),
      ...(ending.pending === undefined ? {} : { pending: ending.pending }),
    },
    run.clock.now(),
  );
}

function truncatedCallsError(run: RunContext): KeelError {
  const slot = run.agent.models[run.state.modelIndex]!;
  return new KeelError(
    'provider.max_tokens',
    `${slot.key} stopped at its output token limit in the middle of tool calls`,
    {
      provider: slot.provider.provider,
      data: { partialOutput: run.state.partialOutput },
      guidance: "Raise the model's maxOutputTokens so that whole tool calls fit.",
    },
  );
}
