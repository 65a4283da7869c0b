import { KeelError } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';
import type { ToolContext } from '../../spec/tool.js';
import type { RunResult } from '../loop/run.js';
import { ChildInterruption, PARENT_RUN, type ParentRunHandle } from '../run/child-runs.js';
import type { ChildAgent } from './child-agent.js';

/** The link to the run making a tool call (absent when `execute` is called outside a keel run). */
export function parentRunOf(context: ToolContext): ParentRunHandle | undefined {
  return (context as { [PARENT_RUN]?: ParentRunHandle })[PARENT_RUN];
}

/** The id of the child run a tool call starts: derived from the call's idempotency key, so a replay finds it again. */
export function childRunIdOf(idempotencyKey: string, toolName: string): string {
  return `${idempotencyKey}/${toolName}`;
}

/**
 * Runs `child` as a child run of the tool call's run: started with an id derived from the call's idempotency key, or,
 * when a run with that id is stored already (the call runs again after a crash or an interruption), resumed from its
 * checkpoint (a run that ended resolves with its stored result, calling nothing). It draws from the parent's retry
 * budget and deadline, and is cancelled with the call. Resolves with the child's result when it completed; throws
 * a {@link ChildInterruption} when it waits for decisions, and a non-retryable KeelError carrying the child's code
 * when it failed.
 */
export async function runChild(
  child: ChildAgent,
  context: ToolContext,
  toolName: string,
  kind: 'tool' | 'handoff',
  input: string | readonly Message[],
): Promise<RunResult<unknown>> {
  const parent = parentRunOf(context);
  const runId = childRunIdOf(context.idempotencyKey, toolName);
  const link = parent === undefined ? {} : { [PARENT_RUN]: parent };
  await parent?.saved();
  parent?.childStarted({
    runId,
    agentName: child.name,
    toolName,
    kind,
    idempotencyKey: context.idempotencyKey,
  });
  // A first execution of the call cannot have started the child (the call is saved as started before it runs, and a
  // resumed one counts its earlier executions): only a later one asks the store.
  const stored =
    child.store === undefined || context.attempt <= 1 ? undefined : await child.store.loadRun(runId);
  const result =
    stored === undefined
      ? await child.run(input, { runId, signal: context.signal, ...link })
      : await child.resume(runId, {
          signal: context.signal,
          ...(parent?.answersFor(runId) ?? {}),
          ...link,
        } as Parameters<ChildAgent['resume']>[1]);
  parent?.childEnded(runId, {
    status: result.status,
    stopReason: result.stopReason,
    ...(result.error === undefined ? {} : { errorCode: result.error.code }),
    report: result.report,
  });
  if (result.status === 'completed') return result;
  if (context.signal.aborted) throw context.signal.reason;
  if (result.status === 'interrupted' && result.pending !== undefined && result.pending.length > 0) {
    const stopReason = result.stopReason === 'approval_required' ? 'approval_required' : 'decision_required';
    throw new ChildInterruption(
      stopReason,
      result.pending.map((decision) => ({ ...decision, childRunId: decision.childRunId ?? runId })),
    );
  }
  throw childFailure(child.name, result);
}

/** The error the parent's model sees for a child run that failed (or was cancelled, or stopped): its code kept. */
function childFailure(agentName: string, result: RunResult<unknown>): KeelError {
  const error = result.error;
  const code = error?.code ?? 'tool.failed';
  const why = error === undefined ? result.stopReason : error.message;
  return new KeelError(code, `Agent "${agentName}" (run ${result.runId}) ${result.status}: ${why}`, {
    retryable: false,
    provider: agentName,
    data: {
      childRunId: result.runId,
      agentName,
      status: result.status,
      stopReason: result.stopReason,
    },
    guidance:
      `${error?.guidance === undefined ? '' : `${error.guidance} `}` +
      `The agent "${agentName}" could not finish this task; go on without it, try a smaller request, or tell the user.`,
    ...(error === undefined ? {} : { cause: error }),
  });
}
