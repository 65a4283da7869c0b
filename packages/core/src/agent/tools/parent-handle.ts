import {
  type ChildRunEnding,
  type ChildRunStart,
  type ForwardedAnswers,
  type ParentRunHandle,
  recordChildEnded,
  recordChildStarted,
} from '../run/child-runs.js';
import type { RunContext } from '../run/run-context.js';

/**
 * What a tool call of `run` (the call with idempotency key `callKey`) hands an agent tool or a handoff about the run
 * (see `ParentRunHandle`).
 */
export function parentHandleOf(run: RunContext, callKey: string): ParentRunHandle {
  const state = run.state;
  return {
    runId: state.runId,
    callKey,
    budget: run.budget,
    deadlineAtMs: state.deadlineAtMs,
    ...(state.tenant === undefined ? {} : { tenant: state.tenant }),
    ...(state.priority === undefined ? {} : { priority: state.priority }),
    messages: state.messages,
    answersFor: (childRunId) => answersFor(run.childAnswers, childRunId),
    saved: () => run.durable?.saved() ?? Promise.resolve(),
    childStarted: (child: ChildRunStart) => recordChildStarted(state, child),
    childEnded: (childRunId: string, ending: ChildRunEnding) => recordChildEnded(state, childRunId, ending),
    handedOff: (to: string) => {
      if (!run.events.active) return;
      run.events.emit({
        type: 'handoff',
        runId: state.runId,
        atMs: run.clock.now(),
        step: state.step,
        from: state.agentName,
        to,
      });
    },
  };
}

/** The answers whose keys belong to the child run or its own children (their keys start with its run id). */
function answersFor(answers: ForwardedAnswers | undefined, childRunId: string): ForwardedAnswers {
  const prefix = `${childRunId}:`;
  const picked: ForwardedAnswers = {};
  for (const [key, answer] of Object.entries(answers?.approvals ?? {})) {
    if (key.startsWith(prefix)) picked.approvals = { ...picked.approvals, [key]: answer };
  }
  for (const [key, decision] of Object.entries(answers?.decisions ?? {})) {
    if (key.startsWith(prefix)) picked.decisions = { ...picked.decisions, [key]: decision };
  }
  return picked;
}
