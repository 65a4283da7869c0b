import { KeelError } from '../errors/keel-error.js';
import type { Message } from '../spec/model.js';
import type { SessionConflictData, SessionRecord } from '../spec/run-store.js';
import { storeCallsOf, withStoreRetries } from './durability/store-calls.js';
import { startDurableRun } from './durable-start.js';
import {
  checkMessageParts,
  checkOptions,
  type RunOptions,
  type RunResult,
  refuseRunOption,
  setRunToolChoice,
} from './loop/run.js';
import type { AgentRuntime } from './run/agent-runtime.js';
import type { RunAbort, RunRegistry } from './run/cancellation.js';
import { newRunId } from './run/run-id.js';
import { createRunState, type RunState } from './run/run-state.js';
import { checkSessionStore, type SessionSettings } from './run/session-options.js';
import { isSessionConflict } from './run/session-state.js';
import { settleCompletedHolder, settleSession } from './sessions/session-settle.js';
import { waitForSession } from './sessions/session-waiters.js';

/** How often a run waiting for a session held in another process looks again, in milliseconds. */
const SESSION_POLL_MS = 250;
/** Claims refused because the session moved on (another run appended) before this run gives up: a livelock guard. */
const MAX_MOVES = 20;

/**
 * Runs the agent on a session: loads the session's conversation, then runs durably on it. The run is created in the
 * store together with its claim on the session, at the version the conversation was loaded at, so that two runs can
 * never both build on the same turns; it appends its turns when it completes (see `settleSession`).
 *
 * When another run holds the session: a run still going is waited for (`sessionBusy: 'wait'`, up to `sessionWaitMs`)
 * or refused at once (`'fail'`); a run that is interrupted, or whose process stopped (its lease expired), is refused at
 * once whatever `sessionBusy` says (it must be resumed or cancelled first); a completed run whose turns were not yet
 * appended gets them appended, then this run goes on. A refusal rejects with `store.conflict` before anything ran.
 */
export async function runOnSession<Output>(
  runtime: AgentRuntime,
  registry: RunRegistry,
  agentRuns: Map<string, RunAbort>,
  input: string | readonly Message[],
  options: RunOptions,
  settings: SessionSettings,
): Promise<RunResult<Output>> {
  checkOptions(options);
  const store = checkSessionStore(runtime.durability?.store);
  const durability = runtime.durability!;
  const inputMessages = sessionInputOf(input);
  const { clock } = runtime;
  const { sessionId } = settings;
  const runId = options.runId ?? newRunId();
  const retry = storeCallsOf(durability, clock);
  const waitUntilMs = clock.now() + settings.waitMs;
  let moves = 0;
  for (;;) {
    const session = await withStoreRetries(() => store.loadSession(sessionId), retry);
    const state = sessionRunState(runtime, runId, sessionId, session, inputMessages);
    setRunToolChoice(runtime, state, options);
    if (options.tenant !== undefined) state.tenant = options.tenant;
    if (options.priority !== undefined && options.priority !== 0) state.priority = options.priority;
    let conflict: KeelError;
    try {
      const result = await startDurableRun<Output>(runtime, durability, registry, agentRuns, state, options);
      return await settleSession(runtime, result);
    } catch (error) {
      if (!isSessionConflict(error)) throw error;
      conflict = error;
    }
    const data = conflict.data as unknown as SessionConflictData;
    if (data.actualVersion !== undefined) {
      if (++moves > MAX_MOVES)
        throw refusal(conflict, `it kept moving on (${MAX_MOVES} times) before this run could start`);
      continue;
    }
    const holder = data.activeRunId!;
    const resumeIt = `resume it (resume("${holder}"), keel resume ${holder}) or cancel it first`;
    if (data.activeRunStatus === 'completed') {
      // Its process stopped (or its store failed) between its end and its append: append for it, then go on.
      if (++moves <= MAX_MOVES && (await settleCompletedHolder(runtime, holder))) continue;
      throw refusal(conflict, `run ${holder} completed but its turns cannot be appended`);
    }
    if (data.activeRunStatus === 'interrupted')
      throw refusal(conflict, `run ${holder} is interrupted: ${resumeIt}`);
    const nowMs = clock.now();
    const leaseExpiresAtMs = data.activeRunLeaseExpiresAtMs;
    if (leaseExpiresAtMs === undefined || leaseExpiresAtMs <= nowMs) {
      throw refusal(
        conflict,
        `run ${holder} stopped without ending (its process may have died): ${resumeIt}`,
      );
    }
    if (settings.busy === 'fail')
      throw refusal(conflict, `run ${holder} is running on it (sessionBusy: 'fail')`);
    if (nowMs >= waitUntilMs) {
      throw refusal(conflict, `run ${holder} still runs on it after ${settings.waitMs} ms (sessionWaitMs)`);
    }
    try {
      await waitForSession(sessionId, Math.min(SESSION_POLL_MS, waitUntilMs - nowMs), clock, options.signal);
    } catch (reason) {
      throw new KeelError(
        'run.cancelled',
        `Run ${runId} was cancelled while it waited for session ${sessionId}`,
        {
          data: { runId, sessionId },
          cause: reason,
        },
      );
    }
  }
}

/** A new run's state on the session: the instructions, the session's history (bounded), then the input. */
function sessionRunState(
  runtime: AgentRuntime,
  runId: string,
  sessionId: string,
  session: SessionRecord | undefined,
  input: readonly Message[],
): RunState {
  const history = (session?.turns ?? []).flatMap((turn) => turn.messages as unknown as Message[]);
  const bounded = runtime.conversation?.bound?.(history) ?? history;
  const messages: Message[] = [];
  if (runtime.instructions !== undefined) messages.push({ role: 'system', content: runtime.instructions });
  for (const message of bounded) messages.push(message);
  const turnStart = messages.length;
  for (const message of input) messages.push({ ...message });
  const startedAtMs = runtime.clock.now();
  const state = createRunState({
    runId,
    agentName: runtime.name,
    messages,
    startedAtMs,
    deadlineAtMs: startedAtMs + runtime.limits.timeoutMs,
  });
  state.session = { sessionId, baseVersion: session?.version ?? 0, turnStart, carried: [] };
  return state;
}

/** A session run's input: a prompt, or messages to add to the session (the agent's instructions are its system message). */
function sessionInputOf(input: string | readonly Message[]): Message[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0) {
    refuseRunOption('input must be a string, or a non-empty array of messages ({ role, content })');
  }
  input.forEach((message, index) => {
    const role = (message as { role?: unknown })?.role;
    if (!['user', 'assistant', 'tool'].includes(role as string) || typeof message?.content !== 'string') {
      refuseRunOption(
        `input[${index}] must be a message with role user, assistant or tool (a session run's system message is the agent's instructions), and string content`,
      );
    }
    checkMessageParts(message, index);
  });
  return [...input];
}

/** The refusal of a session claim, saying which run holds the session and what to do. */
function refusal(conflict: KeelError, why: string): KeelError {
  const sessionId = String(conflict.data.sessionId);
  return new KeelError('store.conflict', `Session ${sessionId} is in use: ${why}`, {
    data: conflict.data,
    cause: conflict,
    guidance: 'One run at a time on a session: wait for it to end, or run on another session.',
  });
}
