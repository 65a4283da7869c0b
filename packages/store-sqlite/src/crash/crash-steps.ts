// What the crash tests check of one finished run against its plan: every planned call made, completed in the ledger,
// its result (or an abandoned error) in the conversation, its side effect in the file, and the final answer naming
// it. A test fixture compiled with the package, not part of its API.
import type { LedgerEntry, Message } from '@keel/core';
import type { Effect } from './crash-harness.js';
import { crashPlan, expectedKey } from './crash-plan.js';

/** The part of a stored run's state the checks read. */
export interface StoredState {
  messages: Message[];
  output?: unknown;
}

/**
 * The completed steps of run `runId` that the store or the side-effect file lost; `decisions` holds the operator's
 * answers (an error result is expected only for a call abandoned).
 */
export function lostSteps(
  runId: string,
  decisions: ReadonlyMap<string, 'execute' | 'abandon'>,
  state: StoredState,
  ledger: readonly LedgerEntry[],
  effects: ReadonlyMap<string, Effect>,
): string[] {
  const problems: string[] = [];
  const plan = crashPlan(runId);
  const assistants = state.messages.filter((message) => message.role === 'assistant');
  if (assistants.length !== plan.steps.length + 1)
    problems.push(`${runId}: ${assistants.length} model steps, planned ${plan.steps.length + 1}`);
  const output = String(state.output ?? '');
  plan.steps.forEach((calls, stepIndex) => {
    const step = stepIndex + 1;
    const asked = assistants[stepIndex]?.role === 'assistant' ? (assistants[stepIndex].toolCalls ?? []) : [];
    calls.forEach((call, callIndex) => {
      const key = expectedKey(runId, step, callIndex);
      const where = `${runId} step ${step} call ${callIndex} (${call.toolName})`;
      if (asked[callIndex]?.id !== call.callId || asked[callIndex]?.name !== call.toolName)
        problems.push(`${where}: the model's call is missing from the conversation`);
      const entry = ledger.find((candidate) => candidate.idempotencyKey === key);
      if (entry?.status !== 'completed')
        problems.push(`${where}: the ledger says ${entry?.status ?? 'nothing'}`);
      const message = state.messages.find(
        (candidate) => candidate.role === 'tool' && candidate.toolCallId === call.callId,
      );
      if (message?.role !== 'tool') problems.push(`${where}: no tool result in the conversation`);
      else if (message.isError === true) {
        if (decisions.get(key) !== 'abandon') problems.push(`${where}: an error result nobody abandoned`);
      } else if (!message.content.includes(key)) {
        problems.push(`${where}: the result does not carry its idempotency key`);
      }
      if (!effects.has(key)) problems.push(`${where}: completed, but its side effect is not in the file`);
      if (!output.includes(`${call.callId}=`))
        problems.push(`${where}: the final answer does not mention it`);
    });
  });
  return problems;
}
