import {
  KeelError,
  type Message,
  type RunStore,
  type SessionCost,
  type SessionRecord,
  sessionCost,
} from '@keel/core';
import { type Output, paint } from '../../output/output.js';
import { formatUsd } from '../../output/render.js';

/** `keel sessions list`: the most recently updated sessions first, at most `limit`. */
export async function listSessions(
  store: RunStore,
  limit: number,
  json: boolean,
  output: Output,
): Promise<number> {
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

/**
 * `keel sessions show <id>`: a session's turns, and what its runs cost (see `sessionCost`; `cost` in the JSON:
 * `totalUsd`, `byModel`, `unpricedCalls`, `runs`).
 */
export async function showSession(
  store: RunStore,
  sessionId: string,
  json: boolean,
  output: Output,
): Promise<number> {
  const session = await loadOrFail(store, sessionId);
  const cost = await sessionCost(store, session);
  if (json) {
    const { sessionId: _sessionId, ...costFields } = cost;
    output.out(JSON.stringify({ ...session, cost: costFields }, null, 2));
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
  output.out(costLine(cost));
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

/** `keel sessions delete <id>`: deletes a session (not while a run holds it, unless `force`). */
export async function deleteSession(
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

/** `cost     $0.004200 over 2 runs (openai/gpt-4.1 $0.0040, openai/gpt-4.1-mini $0.000200)`. */
function costLine(cost: SessionCost): string {
  const models = Object.entries(cost.byModel).map(([model, usd]) => `${model} ${formatUsd(usd)}`);
  const runs = `${cost.runs.length} run${cost.runs.length === 1 ? '' : 's'}`;
  const unpriced = cost.unpricedCalls > 0 ? ` · ${cost.unpricedCalls} calls of models without a price` : '';
  return `cost     ${formatUsd(cost.totalUsd)} over ${runs}${models.length > 0 ? ` (${models.join(', ')})` : ''}${unpriced}`;
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
