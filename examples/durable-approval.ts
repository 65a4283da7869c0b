// A durable agent whose side effect waits for a person's approval: the run stops `interrupted`, its state in the
// store; later (another process, after a restart) it is resumed with the answer. Also: a tool's reconcile, which
// finds out whether a call whose outcome is unknown took effect, so the effect is never repeated blindly.
//   npm run build && node examples/dist/durable-approval.js
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { agent, MemoryRunStore, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { z } from 'zod';

/** A ticket system that remembers the idempotency key each ticket was opened with (its outbox). */
function ticketSystem() {
  const opened: Array<{ id: string; title: string; idempotencyKey: string }> = [];
  return {
    opened,
    async create(input: { title: string; idempotencyKey: string }, _options: { signal: AbortSignal }) {
      const ticket = { id: randomUUID(), ...input };
      opened.push(ticket);
      return ticket;
    },
    async findByKey(idempotencyKey: string, _options: { signal: AbortSignal }) {
      return opened.find((ticket) => ticket.idempotencyKey === idempotencyKey);
    },
  };
}

/** Runs the example. */
export async function main() {
  const model = simulated();
  const store = new MemoryRunStore(); // SqliteRunStore or PostgresRunStore to survive a restart
  const tickets = ticketSystem();

  // #region create-ticket
  const createTicket = tool({
    name: 'create_ticket',
    description: 'Opens a ticket',
    input: z.object({ title: z.string() }),
    needsApproval: true, // or a function of the input: ({ title }) => title.includes('urgent')
    async execute({ title }, { idempotencyKey, signal }) {
      return tickets.create({ title, idempotencyKey }, { signal });
    },
    async reconcile(_input, { idempotencyKey, signal }) {
      const found = await tickets.findByKey(idempotencyKey, { signal });
      return found === undefined ? { happened: false } : { happened: true, output: found };
    },
  });
  // #endregion

  // #region approval
  const support = agent({ model, tools: [createTicket], store });
  const first = await support.run('Open a ticket: the printer is on fire');
  first.status; // 'interrupted', stopReason 'approval_required': nothing ran yet
  const waiting = first.pending?.find((decision) => decision.kind === 'approval');

  // Later, from any process with the same store (the CLI: keel resume <run-id> --approve <key>):
  const answered = waiting
    ? await support.resume(first.runId, { approvals: { [waiting.idempotencyKey]: { approved: true } } })
    : first;
  answered.status; // 'completed': the ticket was opened, once
  // #endregion

  await model.close();
  return {
    first: first.status,
    stopReason: first.stopReason,
    waiting: waiting?.toolName,
    answered: answered.status,
    opened: tickets.opened.length,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
