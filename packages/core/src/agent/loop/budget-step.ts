import { KeelError } from '../../errors/keel-error.js';
import { type CallReservation, DEFAULT_TENANT, reserveCall } from '../../governance/budget-gate.js';
import { awaitPaceTurn, type PaceTurn } from '../../governance/pace-turn.js';
import { estimatePromptTokens } from '../../governance/prompt-estimate.js';
import { sleep } from '../../policies/sleep.js';
import type { ModelRequest, ModelResponse } from '../../spec/model.js';
import type { ModelSlot } from '../run/agent-runtime.js';
import { countRequest } from '../run/report.js';
import type { RunContext } from '../run/run-context.js';
import { switchModel } from './model-recovery.js';

/** What a step asks of the model (see model-step). */
type StepRequest = Omit<ModelRequest, 'signal'>;

/**
 * One attempt of a model call under the agent's budgets and pace: reserves the call's worst case before `send` (which
 * sends it with the output limit the reservation holds for), waits for the pace governor's turn (a paced wait is not a
 * retry: it draws nothing from the retry budget, and the breaker judges the call only once it is sent), and settles
 * the actual spend after. A call that cannot be reserved is not sent: `reserveCall` throws (`policy.budget_exhausted`,
 * or `store.unavailable` under the rule `closed`, which the retry policy retries). A call reserved on a cheaper later
 * model of the chain (the budgets' rule 1) moves the run to that model (`switchModel`) and is sent there. The answer's
 * rate-limit headers, and a 429's Retry-After, go to the governor.
 */
export async function budgetedAttempt(
  run: RunContext,
  request: StepRequest,
  send: (slot: ModelSlot, request: StepRequest) => Promise<ModelResponse>,
): Promise<ModelResponse> {
  const { governance, models } = run.agent;
  const { budgets, governor } = governance;
  const { state, clock } = run;
  // Read at each attempt: an earlier attempt of this step may have moved the run to a cheaper model.
  let slot = models[state.modelIndex]!;
  const promptTokens = estimatePromptTokens(request.messages, request.tools);
  let reservation: CallReservation | undefined;
  let asked = request;
  if (budgets !== undefined) {
    reservation = await reserveCall(
      budgets,
      governance.prices,
      {
        runId: state.runId,
        sessionId: state.session?.sessionId,
        tenant: state.tenant,
        runTokens: state.usage.inputTokens + state.usage.outputTokens,
        runCostUsd: state.report.cost?.totalUsd ?? 0,
      },
      {
        provider: slot.provider,
        promptTokens,
        maxOutputTokens: request.maxOutputTokens,
        nowMs: clock.now(),
        fallbacks: models.slice(state.modelIndex + 1).map((later) => later.provider),
      },
    );
    if (reservation.fallbackIndex !== undefined) {
      switchModel(run, state.modelIndex + 1 + reservation.fallbackIndex, 'policy.budget_exhausted');
      slot = models[state.modelIndex]!;
      run.watch(slot);
      run.currentModel = slot;
      const key = slot.key;
      asked = { ...request, onContinuationRequest: () => countRequest(state.report, key) };
    }
  }
  const sent =
    reservation === undefined || reservation.maxOutputTokens === asked.maxOutputTokens
      ? asked
      : { ...asked, maxOutputTokens: reservation.maxOutputTokens };
  let response: ModelResponse;
  let turn: PaceTurn | undefined;
  try {
    if (governor !== undefined) {
      turn = await awaitPaceTurn(
        governor,
        {
          key: `${slot.key}/${governor.keyName}`,
          callId: `${String(++callSequence).padStart(12, '0')}:${state.runId}`,
          tokens: promptTokens + (sent.maxOutputTokens ?? 0),
          tenant: state.tenant ?? DEFAULT_TENANT,
          priority: state.priority ?? 0,
        },
        {
          now: () => clock.now(),
          sleep: (delayMs) => sleep(delayMs, clock, run.abort.signal),
          onStoreUnavailable: (error) => paceStoreUnavailable(run, slot, error),
        },
      );
    }
    response = await send(slot, sent);
  } catch (error) {
    await reservation?.settle(undefined);
    await turn?.ended(undefined);
    if (
      turn !== undefined &&
      KeelError.isInstance(error) &&
      error.code === 'provider.rate_limited' &&
      error.retryAfterMs !== undefined
    ) {
      await turn.refused(error.retryAfterMs);
    }
    throw error;
  }
  await reservation?.settle(response.usage);
  await turn?.ended(response.rateLimit);
  return response;
}

/**
 * Tells pace stores one waiting call from another (with the run id); zero-padded first, so that of two calls of this
 * process that asked in the same millisecond the one that asked first is first in line.
 */
let callSequence = 0;

/** The agent's shared pace store did not answer: the call is paced by the process's governor (see `PaceOptions`). */
function paceStoreUnavailable(run: RunContext, slot: ModelSlot, error: unknown): void {
  const { events, state, clock } = run;
  if (!events.active) return;
  events.emit({
    type: 'pace-store-unavailable',
    runId: state.runId,
    atMs: clock.now(),
    step: state.step,
    model: slot.key,
    errorCode: KeelError.isInstance(error) ? error.code : 'store.unavailable',
  });
}
