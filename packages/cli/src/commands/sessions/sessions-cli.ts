import { checkSessionId, KeelError } from '@keel/core';
import { withStore } from '../../store.js';
import { integerArgument } from '../command-arguments.js';
import type { CommandEntry } from '../command-table.js';
import { STORE_HELP } from '../option-help.js';
import { deleteSession, listSessions, showSession } from './sessions.js';

interface SessionsValues {
  limit?: string;
  json?: boolean;
  force?: boolean;
  store?: string;
}

const SESSIONS_ABOUT =
  'Sessions are conversations kept across runs (keel chat, or agent.run(input, { sessionId })): one turn per completed run.';

/** The usage of `keel sessions`, given when a subcommand's arguments are wrong. */
function usageError(): KeelError {
  return new KeelError(
    'config.invalid',
    `usage:
  keel sessions list [--limit N] [--json] [--store URL|PATH]
  keel sessions show <session-id> [--json] [--store URL|PATH]
  keel sessions delete <session-id> [--force] [--json] [--store URL|PATH]`,
  );
}

/** `keel sessions list`. */
export const sessionsListCli: CommandEntry = {
  name: 'sessions list',
  summary: 'list the sessions of a store, most recently updated first',
  usage: `keel sessions list: the sessions of a store, most recently updated first

usage: keel sessions list [--limit N] [--json] [--store URL|PATH]

${SESSIONS_ABOUT}

options:
  --limit N       the most sessions shown (default: 20)
  --json          print JSON
${STORE_HELP}`,
  options: { limit: { type: 'string' }, json: { type: 'boolean' }, store: { type: 'string' } },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as SessionsValues;
    if (positionals.length > 0) throw usageError();
    const limit = values.limit === undefined ? 20 : integerArgument('--limit', values.limit, 1);
    return withStore(values.store, workingDirectory, { readOnly: true }, (store) =>
      listSessions(store, limit, values.json === true, output),
    );
  },
};

/** `keel sessions show <session-id>`. */
export const sessionsShowCli: CommandEntry = {
  name: 'sessions show',
  summary: "show a session's turns and what its runs cost",
  usage: `keel sessions show: a session's turns, what was said and which tools were called, and what the session's
runs cost (the runs that appended its turns and the run holding it, added up, by model)

usage: keel sessions show <session-id> [--json] [--store URL|PATH]

options:
  --json          print JSON
${STORE_HELP}`,
  options: { json: { type: 'boolean' }, store: { type: 'string' } },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as SessionsValues;
    const [sessionId, ...extra] = positionals;
    if (sessionId === undefined || extra.length > 0) throw usageError();
    checkSessionId(sessionId, 'keel sessions show');
    return withStore(values.store, workingDirectory, { readOnly: true }, (store) =>
      showSession(store, sessionId, values.json === true, output),
    );
  },
};

/** `keel sessions delete <session-id>`. */
export const sessionsDeleteCli: CommandEntry = {
  name: 'sessions delete',
  summary: 'delete a session (its runs stay in the store)',
  usage: `keel sessions delete: delete a session; its runs stay in the store

usage: keel sessions delete <session-id> [--force] [--json] [--store URL|PATH]

options:
  --force         even while a run holds the session (its turns are then never saved)
  --json          print JSON
${STORE_HELP}`,
  options: { force: { type: 'boolean' }, json: { type: 'boolean' }, store: { type: 'string' } },
  run: ({ values: parsed, positionals }, { output, workingDirectory }) => {
    const values = parsed as SessionsValues;
    const [sessionId, ...extra] = positionals;
    if (sessionId === undefined || extra.length > 0) throw usageError();
    checkSessionId(sessionId, 'keel sessions delete');
    return withStore(values.store, workingDirectory, {}, (store) =>
      deleteSession(store, sessionId, values.force === true, values.json === true, output),
    );
  },
};
