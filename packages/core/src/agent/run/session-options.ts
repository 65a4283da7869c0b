import { KeelError } from '../../errors/keel-error.js';
import { throwOptionError } from '../../options/option-error.js';
import type { RunStore } from '../../spec/run-store.js';

/** What a run does when its session is held by another run still going: wait for it (bounded), or fail at once. */
export type SessionBusy = 'wait' | 'fail';

/** A session run's options, checked. */
export interface SessionSettings {
  readonly sessionId: string;
  readonly busy: SessionBusy;
  readonly waitMs: number;
}

/** The longest `sessionWaitMs`: one hour. */
const MAX_SESSION_WAIT_MS = 3_600_000;

/** Session ids: 1 to 128 characters, letters, digits and `. _ : @ -`, starting with a letter or a digit. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/**
 * Checks a session id (see {@link SESSION_ID_PATTERN}): `config.invalid`, naming `where` (such as `run`), when it
 * is not one.
 */
export function checkSessionId(sessionId: unknown, where = 'run'): asserts sessionId is string {
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
    const shown = typeof sessionId === 'string' ? JSON.stringify(sessionId.slice(0, 140)) : String(sessionId);
    throw new KeelError(
      'config.invalid',
      `${where}: sessionId must be 1 to 128 characters (letters, digits and . _ : @ -, starting with a letter or a digit), not ${shown}`,
      { data: { where } },
    );
  }
}

/**
 * The session options of `run` (`sessionId`, `sessionBusy`, `sessionWaitMs`), checked; undefined for a run on no
 * session. `config.invalid` says what to fix.
 */
export function sessionSettingsOf(options: unknown): SessionSettings | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  const { sessionId, sessionBusy, sessionWaitMs } = options as Record<string, unknown>;
  if (sessionId === undefined) {
    if (sessionBusy !== undefined || sessionWaitMs !== undefined)
      throwOptionError({
        where: 'run',
        option: 'sessionBusy',
        message: 'sessionBusy and sessionWaitMs need a sessionId',
      });
    return undefined;
  }
  checkSessionId(sessionId);
  if (sessionBusy !== undefined && sessionBusy !== 'wait' && sessionBusy !== 'fail')
    throwOptionError({
      where: 'run',
      option: 'sessionBusy',
      message: `sessionBusy must be "wait" or "fail", not ${JSON.stringify(sessionBusy)}`,
    });
  if (
    sessionWaitMs !== undefined &&
    (!Number.isInteger(sessionWaitMs) ||
      (sessionWaitMs as number) < 0 ||
      (sessionWaitMs as number) > MAX_SESSION_WAIT_MS)
  )
    throwOptionError({
      where: 'run',
      option: 'sessionWaitMs',
      message: `sessionWaitMs must be an integer from 0 to ${MAX_SESSION_WAIT_MS} (milliseconds)`,
    });
  return {
    sessionId,
    busy: (sessionBusy as SessionBusy | undefined) ?? 'wait',
    waitMs: (sessionWaitMs as number | undefined) ?? 30_000,
  };
}

const SESSION_METHODS = ['loadSession', 'appendSessionTurn', 'releaseSession'] as const;

/** Checks that a store keeps sessions: `config.invalid` naming what it lacks. */
export function checkSessionStore(store: RunStore | undefined): RunStore {
  if (store === undefined)
    throwOptionError({
      where: 'run',
      option: 'a',
      message: 'a run on a session needs a store: pass store to agent(), such as new SqliteRunStore(path)',
    });
  const candidate = store as unknown as Record<string, unknown>;
  const missing = SESSION_METHODS.filter((method) => typeof candidate[method] !== 'function');
  if (missing.length > 0)
    throwOptionError({
      where: 'run',
      option: 'the',
      message: `the agent's store does not keep sessions (missing: ${missing.join(', ')}); use a keel store of this version`,
    });
  return store;
}
