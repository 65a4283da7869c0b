import { KeelError } from '../../errors/keel-error.js';
import type { ModelResponse } from '../../spec/model.js';
import { runGuardrails } from '../guardrails/guardrail.js';
import { tokenBudgetError, turnLimitError } from '../run/limits.js';
import type { RunContext } from '../run/run-context.js';
import { beginStep, endStep, type RunState, recordModelResponse } from '../run/run-state.js';
import { forcesToolCall } from '../tools/tool-choice.js';
import { runToolCalls, toolMessages } from '../tools/tool-step.js';
import { eventLoopTurn } from './event-loop-turn.js';
import { settleFinalAnswer } from './final-answer.js';
import { callModelChain } from './model-step.js';
import { endingOf, failedEnding, finish, type RunEnding, stoppedEnding } from './run-ending.js';

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
    if (run.abort.aborted) throw run.abort.signal.reason;
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
  const abort = run.abort;
  if (abort.aborted) {
    // The work goes on after the run has ended; its late failure has nobody to report to.
    work.catch(() => undefined);
    return Promise.reject(abort.signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abort.signal.reason);
    abort.addAbortListener(onAbort);
    work.then(
      (value) => {
        abort.removeAbortListener(onAbort);
        resolve(value);
      },
      (error: unknown) => {
        abort.removeAbortListener(onAbort);
        reject(error);
      },
    );
  });
}

async function start(run: RunContext): Promise<void> {
  const { state } = run;
  if (run.events.active) {
    const annotations = { ...state.annotations };
    run.events.emit({
      type: 'run-start',
      runId: state.runId,
      atMs: state.startedAtMs,
      agentName: state.agentName,
      ...(state.tenant === undefined ? {} : { tenant: state.tenant }),
      ...parentOf(state),
      annotations,
    });
    keepAnnotations(run, annotations);
  }
  if (run.checkpoints) await run.checkpoint({ kind: 'run-started' });
}

async function resumed(run: RunContext): Promise<void> {
  const { state } = run;
  if (run.events.active) {
    const annotations = { ...state.annotations };
    run.events.emit({
      type: 'run-resumed',
      runId: state.runId,
      atMs: run.clock.now(),
      agentName: state.agentName,
      step: state.step,
      ...(state.tenant === undefined ? {} : { tenant: state.tenant }),
      ...parentOf(state),
      annotations,
    });
    keepAnnotations(run, annotations);
  }
  // A run resumed only to be cancelled goes straight to its end.
  if (run.checkpoints && !run.abort.aborted) await run.checkpoint({ kind: 'run-resumed', step: state.step });
}

/** A child run's link to the tool call of its parent that started it, for its `run-start` and `run-resumed` events. */
function parentOf(state: RunState): { parentRunId?: string; parentCallKey?: string } {
  if (state.parentRunId === undefined) return {};
  return state.parentCallKey === undefined
    ? { parentRunId: state.parentRunId }
    : { parentRunId: state.parentRunId, parentCallKey: state.parentCallKey };
}

/** Keeps in the state what listeners added to the run's annotations; a run with none keeps its state as it was. */
function keepAnnotations(run: RunContext, annotations: Record<string, string>): void {
  if (Object.keys(annotations).length > 0) run.state.annotations = annotations;
}

async function advance(run: RunContext): Promise<RunEnding> {
  const { state, agent, abort } = run;
  const catalog = agent.toolCatalog;
  if (state.step === 0 && state.phase === 'model' && agent.hasGuardrails.input) {
    const blocked = await checkInput(run);
    if (blocked !== undefined) return failedEnding(blocked);
  }
  for (let iteration = 0; ; iteration++) {
    // Between steps (never before the first), runs whose models and tools answer at once would otherwise starve
    // timers (run deadlines included) and I/O.
    const turn = iteration === 0 ? undefined : eventLoopTurn();
    if (turn !== undefined) await turn;
    if (abort.aborted) throw abort.signal.reason;
    // A stream's reader that is behind holds the run before more work: tools or a model call (agent.stream()).
    const held = state.phase === 'answer' ? undefined : run.beforeStep?.();
    if (held !== undefined) await held;
    if (state.phase === 'tools') {
      const outcome = await runToolCalls(run);
      if (outcome.kind === 'stop') return stoppedEnding(outcome.stop);
      if (outcome.kind === 'fail') return failedEnding(outcome.error);
      if (outcome.kind === 'interrupt') {
        const { stopReason, error, pending } = outcome;
        return { status: 'interrupted', stopReason, error, pending };
      }
      const toolCalls = state.pendingToolCalls.length;
      endStep(state, toolMessages(run), []);
      const saved = endOfStep(run, toolCalls);
      if (saved !== undefined) await saved;
      continue;
    }
    if (state.phase === 'answer') {
      const settled = await settleFinalAnswer(run, answerOf(run));
      if (settled.kind === 'complete')
        return { status: 'completed', stopReason: 'final_answer', output: settled.output };
      if (settled.kind === 'fail') return failedEnding(settled.error);
      state.phase = 'model';
      const saved = endOfStep(run, 0);
      if (saved !== undefined) await saved;
      continue;
    }
    const limitError = tokenBudgetError(state, agent.limits) ?? turnLimitError(state, agent.limits);
    if (limitError !== undefined) return failedEnding(limitError);
    // Tool sources (MCP servers) may have changed their tools since the last step.
    if (catalog?.stale) await catalog.update();
    beginStep(state);
    const response = await callModelChain(run);
    recordModelResponse(state, response);
    // Checked before the checkpoint, so that a resumed run never meets tool calls it must not run.
    if (response.toolCalls.length > 0) {
      // A forcing tool choice is spent once the model called a tool: left in force, the run could never answer.
      if (forcesToolCall(state.toolChoice ?? agent.toolChoice)) state.toolChoice = 'auto';
      // Tool calls cut at the token limit may carry truncated arguments: running them would act on half a request.
      if (response.finishReason === 'length') return failedEnding(truncatedCallsError(run));
      // Spent past the budget: no tool runs on the strength of a step the run could not afford.
      const overBudget = tokenBudgetError(state, agent.limits);
      if (overBudget !== undefined) return failedEnding(overBudget);
    }
    if (run.checkpoints) await run.checkpoint({ kind: 'model-response-received', step: state.step });
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

/** The end of a step: its event, and its checkpoint (a promise) when the run is checkpointed. */
function endOfStep(run: RunContext, toolCalls: number): void | PromiseLike<void> {
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
  if (run.checkpoints) return run.checkpoint({ kind: 'step-ended', step: state.step });
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
