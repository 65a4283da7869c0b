// Agents made of agents: a triage agent calls a research agent as a tool (agentTool) and hands the conversation over
// to a support agent (handoffs). Each runs as a child run of the triage run, durable in the same store and linked to
// its parent. Offline, on the simulated provider:
//   npm run build && node examples/dist/compose-agents.js
// The same tree as agent files: examples/triage.yaml.
import { fileURLToPath } from 'node:url';
import { agent, agentTool, MemoryRunStore, type RunStatus, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { z } from 'zod';

/** Runs the triage agent once; returns its children (agent, kind, status) and who answered. */
export async function main(): Promise<{
  status: RunStatus;
  stopDetail: string | undefined;
  /** Each child run: its agent, how it was started, how it ended, and whether its stored state names its parent. */
  children: { agentName: string; kind: string; status: string; linked: boolean }[];
  answeredBy: string | undefined;
  tickets: number;
}> {
  const model = simulated({ faults: 'none' });
  const store = new MemoryRunStore(); // a SqliteRunStore or PostgresRunStore keeps the tree across restarts
  const search = tool({
    name: 'search_policies',
    description: 'Searches the refund and shipping policies',
    input: z.object({ query: z.string() }),
    idempotent: true,
    execute: ({ query }) => ({ query, found: 'Refunds within 30 days of delivery.' }),
  });
  const tickets: string[] = [];
  const createTicket = tool({
    name: 'create_ticket',
    description: 'Opens a support ticket for an order',
    input: z.object({ title: z.string() }),
    execute: ({ title }) => {
      tickets.push(title);
      return { ticket: `T-${tickets.length}` };
    },
  });

  // #region compose-agents
  const research = agent({ name: 'research', model, tools: [search], store });
  const support = agent({ name: 'support', model, tools: [createTicket], store });
  const triage = agent({
    name: 'triage',
    model,
    store,
    tools: [agentTool(research, { name: 'research', description: 'Looks facts up; give it a question' })],
    handoffs: [support], // a transfer_to_support tool; handoff(support, { inputFilter }) for more
  });
  // #endregion

  const result = await triage.run(
    'Research the refund policy, then get support to open a ticket for order 7',
  );
  const children = [];
  for (const child of result.state.children ?? []) {
    const stored = await store.loadRun(child.runId);
    children.push({
      agentName: child.agentName,
      kind: child.kind,
      status: child.status,
      linked: (stored?.state as { parentRunId?: string } | undefined)?.parentRunId === result.runId,
    });
  }
  await model.close();
  return {
    status: result.status,
    stopDetail: result.stopDetail,
    children,
    answeredBy: result.report.children?.answeredBy,
    tickets: tickets.length,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await main(), null, 2));
