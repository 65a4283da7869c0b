import { KeelError } from '../../errors/keel-error.js';
import type { Message } from '../../spec/model.js';

/**
 * What a run on a session keeps in its state (and so in every checkpoint) to append its turns once it completes, in
 * whatever process that happens.
 */
export interface SessionRunState {
  sessionId: string;
  /** The session's version the run's conversation began at: its turns are appended only at this version. */
  baseVersion: number;
  /** Where the run's own messages (its input, then all it added) begin in `messages`. */
  turnStart: number;
  /**
   * The run's own messages a conversation reduction removed or summarised away: the model no longer sees them, the
   * session keeps them. Empty unless the conversation was reduced.
   */
  carried: Message[];
}

/** What became of a session run's turns, in its result. */
export interface RunSessionOutcome {
  readonly sessionId: string;
  /**
   * `saved`: the run completed and its turns were appended (`version` is the session's new version). `held`: the run
   * is interrupted and holds the session; its turns are appended when a resume completes it. `discarded`: the run
   * failed or was cancelled; nothing was appended and the session is free. `unsaved`: the run completed but its
   * turns could not be appended yet (`error` says why); the session stays held by the run, and its turns are appended
   * by the next run on the session, or by `resume(runId)`.
   */
  readonly outcome: 'saved' | 'held' | 'discarded' | 'unsaved';
  readonly version?: number;
  readonly error?: KeelError;
}

/**
 * Before a reduction replaces the conversation: keeps the run's own messages so far for the session, since the
 * reduced conversation may have dropped or summarised them. Every message of the reduced conversation then counts
 * as the session's already, and whatever the run adds afterwards as its own.
 */
export function carrySessionTurns(
  state: { session?: SessionRunState; messages: Message[] },
  reduced: readonly Message[],
): void {
  const session = state.session;
  if (session === undefined) return;
  for (const message of state.messages.slice(session.turnStart)) session.carried.push(message);
  session.turnStart = reduced.length;
}

/** The turns a run on a session appends: its input and everything it added, reductions notwithstanding. */
export function sessionTurnsOf(state: { session?: SessionRunState; messages: Message[] }): Message[] {
  const session = state.session;
  if (session === undefined) return [];
  return [...session.carried, ...state.messages.slice(session.turnStart)];
}

/** Whether `error` is a store's refusal of a session claim (a `store.conflict` carrying `data.sessionId`). */
export function isSessionConflict(error: unknown): error is KeelError {
  return (
    KeelError.isInstance(error) && error.code === 'store.conflict' && typeof error.data.sessionId === 'string'
  );
}
