import { KeelError } from '../../errors/keel-error.js';
import { type CallReservation, reserveCall } from '../../governance/budget-gate.js';
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
 * sends it with the output limit the reservation holds for), waits for the pace governor's turn, and settles the
 * actual spend after. A call that cannot be reserved is not sent: `reserveCall` throws (`policy.budget_exhausted`, or
 * `store.unavailable` under the rule `closed`, which the retry policy retries). A call reserved on a cheaper later
 * model of the chain (the budgets' rule 1) moves the run to that model (`switchModel`) and is sent there. The
 * answer's rate-limit headers, and a 429's Retry-After, go to the governor.
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
  try {
    if (governor !== undefined) {
      const waitMs = governor.admit(slot.key, promptTokens + (sent.maxOutputTokens ?? 0), clock.now());
      if (waitMs > 0) await sleep(waitMs, clock, run.abort.signal);
    }
    response = await send(slot, sent);
  } catch (error) {
    await reservation?.settle(undefined);
    governor?.observe(slot.key, undefined, clock.now());
    if (
      governor !== undefined &&
      KeelError.isInstance(error) &&
      error.code === 'provider.rate_limited' &&
      error.retryAfterMs !== undefined
    ) {
      governor.refused(slot.key, error.retryAfterMs, clock.now());
    }
    throw error;
  }
  await reservation?.settle(response.usage);
  governor?.observe(slot.key, response.rateLimit, clock.now());
  return response;
}
