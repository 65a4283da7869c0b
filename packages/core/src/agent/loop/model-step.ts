import { classify } from '../../errors/classify.js';
import type { ErrorCode } from '../../errors/codes.js';
import { isControlSignal } from '../../errors/control.js';
import { KeelError } from '../../errors/keel-error.js';
import { chargeCall } from '../../governance/run-cost.js';
import type { PolicyContext } from '../../policies/policy.js';
import type { RetryPolicy } from '../../policies/retry.js';
import type { ModelRequest, ModelResponse } from '../../spec/model.js';
import type { ModelSlot } from '../run/agent-runtime.js';
import { FALLBACK_CODES, presentableError, underlyingError } from '../run/failure-rules.js';
import { countRequest, countRetry } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import { waitForOpenBreaker } from './breaker-wait.js';
import { budgetedAttempt } from './budget-step.js';
import {
  declinesRetryAfter,
  largerModelIndex,
  notWaitedFor,
  reduceConversation,
  switchModel,
  withPartialOutput,
} from './model-recovery.js';

/**
 * Asks the model chain for the next message. Each model is called under the run's retry policy (one budget for the
 * run), the model's breaker (kept on the agent, so it spans runs) and a per-call timeout (`network.timeout`).
 *
 * When a model's calls fail: a context overflow first has the conversation manager reduce the conversation and
 * retries the same model, then, when nothing more can be removed, moves to a later model with a larger context
 * window; an unavailable model (see `FALLBACK_CODES`) moves to the next model; anything else fails the step.
 * A run that fell back stays on its fallback for its remaining steps. A Retry-After that ends after the run's deadline
 * or beyond `retry.maxRetryAfterMs` is not waited for: the loop falls back at once, or, with no fallback left, fails
 * with the provider's error carrying the wait it asked for (see `notWaitedFor`). When the last model's breaker is
 * open, the run waits for its half-open moment within `retry.waitForOpenBreakerMs` and its deadline (see
 * `waitForOpenBreaker`). A stream that breaks after part of the answer reached the caller is retried by the same
 * rules (the agent's `streamRecovery`, on by default): the new answer's text is delivered only where it goes beyond
 * what the caller holds, or from its start when it departs from it (see `StepText`, the `stream-recovered` event).
 * With `streamRecovery: false` it is not retried: the step fails with the error, `data.partialOutput` holding what was
 * streamed.
 *
 * Cancellation and control signals pass through as they are.
 */
export async function callModelChain(run: RunContext): Promise<ModelResponse> {
  const { agent, state } = run;
  let reductions = 0;
  run.stepText.reset();
  for (;;) {
    let thrown: unknown;
    try {
      return await callModel(run, agent.models[state.modelIndex]!);
    } catch (error) {
      thrown = error;
    }
    // The step's model, or the cheaper one a budget moved it to (the budgets' rule 1).
    const slot = agent.models[state.modelIndex]!;
    if (run.abort.aborted) throw run.abort.signal.reason;
    if (isControlSignal(thrown)) throw thrown;
    const error = presentableError(
      KeelError.isInstance(thrown) ? thrown : classify(thrown, { provider: slot.provider.provider }),
    );
    const recovers = agent.stream.recovery;
    if (run.deltaDelivered && !recovers) throw withPartialOutput(error, run.streamedText, false);
    // The step fails: with what the caller holds of its answer, when it holds any.
    const failure = (final: KeelError) =>
      run.deltaDelivered ? withPartialOutput(final, run.streamedText, true) : final;
    const cause = underlyingError(error);
    if (cause.code === 'provider.context_overflow') {
      reductions++;
      if (await reduceConversation(run, cause, reductions)) continue;
      const larger = largerModelIndex(run);
      if (larger === undefined) throw failure(error);
      switchModel(run, larger, cause.code);
      continue;
    }
    if (!FALLBACK_CODES.has(cause.code)) throw failure(error);
    if (state.modelIndex + 1 >= agent.models.length) {
      if (await waitForOpenBreaker(run, slot, cause)) continue;
      throw failure(notWaitedFor(run, error, cause));
    }
    switchModel(run, state.modelIndex + 1, cause.code);
  }
}

/** What a step asks of the model, the same for each attempt; each attempt adds its own signal. */
type StepRequest = Omit<ModelRequest, 'signal'>;

function callModel(run: RunContext, slot: ModelSlot): Promise<ModelResponse> {
  run.watch(slot);
  run.currentModel = slot;
  const { agent, state } = run;
  const request: StepRequest = {
    messages: state.messages,
    tools: agent.toolDefinitions,
    outputSchema:
      agent.output === undefined ? undefined : { name: agent.output.name, schema: agent.output.jsonSchema },
    maxOutputTokens: agent.maxOutputTokens,
    temperature: agent.temperature,
    toolChoice: agent.toolDefinitions === undefined ? undefined : (state.toolChoice ?? agent.toolChoice),
    onTextDelta: run.onTextDelta === undefined ? undefined : run.deltaListener,
    onStreamPart: run.streamPartListener,
    streamFirstByteTimeoutMs: agent.stream.firstByteTimeoutMs,
    streamIdleTimeoutMs: agent.stream.idleTimeoutMs,
    // A continuation (Anthropic's pause_turn) is one more request the provider received.
    onContinuationRequest: () => countRequest(state.report, slot.key),
  };
  const send = (to: ModelSlot, sent: StepRequest, context: PolicyContext) =>
    to.breaker === undefined
      ? attempt(run, to, sent, context)
      : to.breaker.execute((admitted) => attempt(run, to, sent, admitted), context);
  return modelRetryOf(run).execute(
    run.agent.governance.budgets === undefined && run.agent.governance.governor === undefined
      ? (context) => send(slot, request, context)
      : (context) => budgetedAttempt(run, request, (to, sent) => send(to, sent, context)),
    run.abort,
  );
}

/** One upstream request: counted, timed out, classified, and checked for a usable shape. */
async function attempt(
  run: RunContext,
  slot: ModelSlot,
  request: StepRequest,
  context: PolicyContext,
): Promise<ModelResponse> {
  const { state, events, clock } = run;
  countRequest(state.report, slot.key);
  const startedMs = events.active ? clock.now() : 0;
  if (events.active) {
    events.emit({
      type: 'model-call-start',
      runId: state.runId,
      atMs: startedMs,
      step: state.step,
      model: slot.key,
      attempt: context.attempt,
      messages: request.messages,
    });
  }
  run.stepText.beginAttempt();
  try {
    const response = await slot.timeout.execute(
      (timed) => slot.provider.generate(new AttemptRequest(request, timed)),
      context,
    );
    checkResponse(response, slot);
    run.finishAttempt();
    const costUsd = chargeCall(
      state.report,
      run.agent.governance.prices,
      slot.key,
      slot.provider,
      response.usage,
    );
    if (events.active) {
      emitCallEnd(run, slot, context.attempt, startedMs, {
        outcome: 'success',
        finishReason: response.finishReason,
        usage: response.usage,
        responseModel: response.model,
        ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
        content: response.content,
        toolCalls: response.toolCalls,
        ...(costUsd === undefined ? {} : { costUsd }),
      });
    }
    return response;
  } catch (thrown) {
    if (isControlSignal(thrown) || context.aborted) throw thrown;
    const error = classify(thrown, { provider: slot.provider.provider, nowMs: clock.now() });
    run.stepText.attemptFailed(error.code);
    run.countError(error);
    if (events.active)
      emitCallEnd(run, slot, context.attempt, startedMs, { outcome: 'error', errorCode: error.code });
    throw error;
  }
}

/**
 * The request of one attempt, with the attempt's own signal (aborted at its timeout or the run's cancellation). The
 * signal is made when the provider first reads it (an AbortSignal costs microseconds, and an in-process model may
 * never read it), through an accessor on the prototype: see `ToolCallContext` for why not an object literal's getter.
 */
class AttemptRequest implements ModelRequest {
  readonly messages: ModelRequest['messages'];
  readonly tools: ModelRequest['tools'];
  readonly toolChoice: ModelRequest['toolChoice'];
  readonly outputSchema: ModelRequest['outputSchema'];
  readonly maxOutputTokens: ModelRequest['maxOutputTokens'];
  readonly temperature: ModelRequest['temperature'];
  readonly onContinuationRequest: ModelRequest['onContinuationRequest'];
  readonly onTextDelta: ModelRequest['onTextDelta'];
  readonly onStreamPart: ModelRequest['onStreamPart'];
  readonly streamFirstByteTimeoutMs: ModelRequest['streamFirstByteTimeoutMs'];
  readonly streamIdleTimeoutMs: ModelRequest['streamIdleTimeoutMs'];
  // A private field: copying the request (`{ ...request }`) copies only what a ModelRequest holds.
  readonly #attempt: PolicyContext;

  constructor(request: StepRequest, attempt: PolicyContext) {
    this.#attempt = attempt;
    this.messages = request.messages;
    this.tools = request.tools;
    this.toolChoice = request.toolChoice;
    this.outputSchema = request.outputSchema;
    this.maxOutputTokens = request.maxOutputTokens;
    this.temperature = request.temperature;
    this.onContinuationRequest = request.onContinuationRequest;
    this.onTextDelta = request.onTextDelta;
    this.onStreamPart = request.onStreamPart;
    this.streamFirstByteTimeoutMs = request.streamFirstByteTimeoutMs;
    this.streamIdleTimeoutMs = request.streamIdleTimeoutMs;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal;
  }
}

// A field added to ModelRequest must be carried by AttemptRequest too: this does not compile until it is.
const attemptRequestCarriesEveryField: Record<Exclude<keyof ModelRequest, keyof AttemptRequest>, never> = {};
void attemptRequestCarriesEveryField;

/** The `model-call-end` event of one attempt: what is common to both outcomes, and the outcome's own fields. */
function emitCallEnd(
  run: RunContext,
  slot: ModelSlot,
  attempt: number,
  startedMs: number,
  outcome:
    | {
        outcome: 'success';
        finishReason: ModelResponse['finishReason'];
        usage: ModelResponse['usage'];
        responseModel: string;
        requestId?: string;
        content: string;
        toolCalls: ModelResponse['toolCalls'];
        costUsd?: number;
      }
    | { outcome: 'error'; errorCode: ErrorCode },
): void {
  const atMs = run.clock.now();
  run.events.emit({
    type: 'model-call-end',
    runId: run.runId,
    atMs,
    step: run.state.step,
    model: slot.key,
    attempt,
    durationMs: atMs - startedMs,
    ...outcome,
  });
}

/** The run's model retry policy, made at its first model call: one per run, drawing on the run's budget. */
function modelRetryOf(run: RunContext): RetryPolicy {
  if (run.modelRetry !== undefined) return run.modelRetry;
  const policy = run.agent.retry.makeModelRetry(run.budget, (error) => {
    run.countError(error);
    // A call whose output the caller already saw is replayed only with stream recovery (which never shows text
    // twice); a retry after the run's deadline would never start, and waiting for it would keep the run from its
    // fallback.
    return (
      error.retryable && (run.agent.stream.recovery || !run.deltaDelivered) && !declinesRetryAfter(run, error)
    );
  });
  policy.onRetry((event) => {
    // A wait the run's deadline cuts short is counted as far as the deadline: the report's waiting fits in the run.
    const waitMs = Math.min(event.delayMs, Math.max(0, run.state.deadlineAtMs - run.clock.now()));
    countRetry(run.state.report, 'model', waitMs);
    if (run.events.active) {
      run.events.emit({
        type: 'retry-scheduled',
        runId: run.runId,
        atMs: run.clock.now(),
        step: run.state.step,
        target: 'model',
        name: run.currentModel?.key ?? '',
        attempt: event.attempt,
        delayMs: event.delayMs,
        errorCode: event.error.code,
      });
    }
  });
  run.modelRetry = policy;
  return policy;
}

/** A provider that returns something unusable is a provider fault (retryable), not a crash of the loop. */
function checkResponse(response: ModelResponse, slot: ModelSlot): void {
  const usage = (response as Partial<ModelResponse> | undefined)?.usage;
  if (
    typeof response !== 'object' ||
    response === null ||
    typeof response.content !== 'string' ||
    !Array.isArray(response.toolCalls) ||
    typeof usage !== 'object' ||
    usage === null ||
    !Number.isFinite(usage.inputTokens) ||
    !Number.isFinite(usage.outputTokens)
  ) {
    throw new KeelError(
      'provider.invalid_response',
      `${slot.key} returned a response without content, toolCalls or usage`,
      {
        provider: slot.provider.provider,
      },
    );
  }
  for (const call of response.toolCalls) {
    if (typeof call?.id !== 'string' || typeof call.name !== 'string' || typeof call.arguments !== 'string') {
      throw new KeelError(
        'provider.invalid_response',
        `${slot.key} returned a tool call without id, name or arguments text`,
        {
          provider: slot.provider.provider,
        },
      );
    }
  }
}
