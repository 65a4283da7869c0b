import { parseArgs } from 'node:util';
import { checkSessionId, KeelError, type Message, type RunStore, type SessionRecord } from '@keel/core';
import { type Output, paint } from '../output.js';
import { integerArgument, parsedArguments } from './command-arguments.js';
import { withStore } from '../store.js';

const SESSIONS_USAGE = `usage:
  keel sessions list [--limit N] [--json] [--store URL|PATH]
  keel sessions show <session-id> [--json] [--store URL|PATH]
  keel sessions delete <session-id> [--force] [--json] [--store URL|PATH]

Sessions are conversations kept across runs (keel chat, or agent.run(input, { sessionId })): one turn per completed run.

options:
  --limit N   list: the most sessions shown, most recently updated first (default: 20)
  --json      print JSON
  --force     delete: even while a run holds the session (its turns are then never saved)
  --store     postgres://... or a SQLite file (default: ./.keel/keel.db)`;

/** What `keel sessions` runs with. */
export interface SessionsContext {
  output: Output;
  workingDirectory: string;
}

/** `keel sessions list|show|delete`: the sessions of a run store. */
export async function sessionsCommand(argv: readonly string[], context: SessionsContext): Promise<number> {
  const { values, positionals } = parse(argv);
  const { output } = context;
  if (values.help === true) {
    output.out(SESSIONS_USAGE);
    return 0;
  }
  const [subcommand, sessionId, ...extra] = positionals;
  const json = values.json === true;
  const usage = () => new KeelError('config.invalid', `${SESSIONS_USAGE}`);
  if (extra.length > 0) throw usage();
  if (subcommand === 'list') {
    if (sessionId !== undefined) throw usage();
    const limit = values.limit === undefined ? 20 : integerArgument('--limit', values.limit, 1);
    return withStore(values.store, context.workingDirectory, { readOnly: true }, (store) =>
      listSessions(store, limit, json, output),
    );
  }
  if ((subcommand === 'show' || subcommand === 'delete') && sessionId !== undefined) {
    checkSessionId(sessionId, `keel sessions ${subcommand}`);
    return withStore(values.store, context.workingDirectory, { readOnly: subcommand === 'show' }, (store) =>
      subcommand === 'show'
        ? showSession(store, sessionId, json, output)
        : deleteSession(store, sessionId, values.force === true, json, output),
    );
  }
  throw usage();
}

async function listSessions(store: RunStore, limit: number, json: boolean, output: Output): Promise<number> {
  const sessions = await store.listSessions({ limit });
  if (json) {
    output.out(JSON.stringify(sessions, null, 2));
    return 0;
  }
  if (sessions.length === 0) {
    output.out('No sessions yet. Start one with: keel chat <agent.yaml>');
    return 0;
  }
  output.out(
    paint(
      output,
      'bold',
      `${'SESSION ID'.padEnd(30)} ${'TURNS'.padStart(5)} ${'MESSAGES'.padStart(8)}  ${'AGENT'.padEnd(20)} UPDATED                   HELD BY`,
    ),
  );
  for (const session of sessions) {
    output.out(
      `${session.sessionId.padEnd(30)} ${String(session.version).padStart(5)} ${String(session.messageCount).padStart(8)}  ${session.agentName.padEnd(20)} ${new Date(session.updatedAtMs).toISOString()}  ${session.activeRunId ?? '-'}`,
    );
  }
  return 0;
}

async function showSession(
  store: RunStore,
  sessionId: string,
  json: boolean,
  output: Output,
): Promise<number> {
  const session = await loadOrFail(store, sessionId);
  if (json) {
    output.out(JSON.stringify(session, null, 2));
    return 0;
  }
  output.out(`${paint(output, 'bold', 'session')}  ${session.sessionId}`);
  output.out(`agent    ${session.agentName}`);
  output.out(
    `turns    ${session.version} (${session.messageCount} messages)${session.activeRunId === undefined ? '' : `   held by run ${session.activeRunId}`}`,
  );
  output.out(
    `created  ${new Date(session.createdAtMs).toISOString()}   updated ${new Date(session.updatedAtMs).toISOString()}`,
  );
  session.turns.forEach((turn, index) => {
    output.out('');
    output.out(
      paint(
        output,
        'grey',
        `turn ${index + 1} · run ${turn.runId} · ${new Date(turn.appendedAtMs).toISOString()}`,
      ),
    );
    for (const message of turn.messages as unknown as Message[]) output.out(messageLine(message, output));
  });
  return 0;
}

async function deleteSession(
  store: RunStore,
  sessionId: string,
  force: boolean,
  json: boolean,
  output: Output,
): Promise<number> {
  const session = await loadOrFail(store, sessionId);
  const holder = session.activeRunId === undefined ? undefined : await store.loadRun(session.activeRunId);
  if (!force && holder !== undefined && (holder.status === 'running' || holder.status === 'interrupted')) {
    throw new KeelError(
      'store.conflict',
      `Session ${sessionId} is held by run ${holder.runId} (${holder.status})`,
      {
        data: { sessionId, activeRunId: holder.runId },
        guidance: `Cancel the run first (keel cancel ${holder.runId}), or pass --force: its turns are then never saved.`,
      },
    );
  }
  const deleted = await store.deleteSession(sessionId);
  if (json) output.out(JSON.stringify({ sessionId, deleted }));
  else output.out(`Deleted session ${sessionId} (${session.version} turns; its runs stay in the store)`);
  return 0;
}

async function loadOrFail(store: RunStore, sessionId: string): Promise<SessionRecord> {
  const session = await store.loadSession(sessionId);
  if (session === undefined) {
    throw new KeelError(
      'store.not_found',
      `No session ${sessionId} in this store (list them with: keel sessions list)`,
      {
        data: { sessionId },
      },
    );
  }
  return session;
}

/** One message of a turn as a line: who said it, and what (a long tool result is cut). */
function messageLine(message: Message, output: Output): string {
  switch (message.role) {
    case 'user':
      return `  ${paint(output, 'bold', 'you  ')}  ${message.content}`;
    case 'assistant': {
      const lines = message.content === '' ? [] : [`  ${paint(output, 'bold', 'agent')}  ${message.content}`];
      for (const call of message.toolCalls ?? []) lines.push(`         → ${call.name} ${call.arguments}`);
      return lines.join('\n');
    }
    case 'tool': {
      const content = message.content.length > 200 ? `${message.content.slice(0, 199)}…` : message.content;
      return `         ← ${message.toolName}: ${content}`;
    }
    default:
      return `  ${message.role}  ${message.content}`;
  }
}

function parse(argv: readonly string[]) {
  return parsedArguments('sessions', () =>
    parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        limit: { type: 'string' },
        json: { type: 'boolean' },
        force: { type: 'boolean' },
        store: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
}
