import { reserveCall } from '../../governance/budget-gate.js';
import { estimatePromptTokens } from '../../governance/prompt-estimate.js';
import type { ModelRequest, ModelResponse } from '../../spec/model.js';
import type { ModelSlot } from '../run/agent-runtime.js';
import type { RunContext } from '../run/run-context.js';

/** What a step asks of the model (see model-step). */
type StepRequest = Omit<ModelRequest, 'signal'>;

/**
 * One attempt of a model call under the agent's budgets: reserves the call's worst case before `send` (which sends it
 * with the output limit the reservation holds for), settles the actual spend after. A call that cannot be reserved is
 * not sent: `reserveCall` throws (`policy.budget_exhausted`, or `store.unavailable` under the rule `closed`, which the
 * retry policy retries). Without budgets, `send` as it is.
 */
export async function budgetedAttempt(
  run: RunContext,
  slot: ModelSlot,
  request: StepRequest,
  send: (request: StepRequest) => Promise<ModelResponse>,
): Promise<ModelResponse> {
  const { governance } = run.agent;
  const budgets = governance.budgets;
  if (budgets === undefined) return send(request);
  const { state } = run;
  const reservation = await reserveCall(
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
      promptTokens: estimatePromptTokens(request.messages, request.tools),
      maxOutputTokens: request.maxOutputTokens,
      nowMs: run.clock.now(),
    },
  );
  const sent =
    reservation.maxOutputTokens === request.maxOutputTokens
      ? request
      : { ...request, maxOutputTokens: reservation.maxOutputTokens };
  let response: ModelResponse;
  try {
    response = await send(sent);
  } catch (error) {
    await reservation.settle(undefined);
    throw error;
  }
  await reservation.settle(response.usage);
  return response;
}
