// The peer of keel's durable run in the checkpoint benchmark: LangGraph.js's ReAct loop (an agent node that plays the
// model, a ToolNode running a `lookup` tool) checkpointed by its SQLite saver, on the same 5-step run as keel's
// `stepModel` + `lookupTool`: four steps that call the tool, a fifth that answers.

import { join } from 'node:path';
import { AIMessage, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { z } from 'zod';
import type { Runner } from './durable-runs.js';
import { FIVE_STEPS, temporaryDirectory } from './five-step-subjects.js';

const lookup = tool(async ({ key }: { key: string }) => JSON.stringify({ value: key }), {
  name: 'lookup',
  description: 'Looks a key up',
  schema: z.object({ key: z.string() }),
});

/**
 * Plays the model: a tool call per step until `steps - 1` tool results are in, then the answer. `history`: the
 * messages before the run's own (each step adds an AI message and a tool result after them).
 */
function agentNode(steps: number, history: number) {
  return (state: typeof MessagesAnnotation.State) => {
    const index = history === 0 ? toolResultsOf(state) : (state.messages.length - history - 1) / 2;
    if (index >= steps - 1) return { messages: [new AIMessage('done')] };
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [
            { id: `call_${index}`, name: 'lookup', args: { key: `k${index}` }, type: 'tool_call' },
          ],
        }),
      ],
    };
  };
}

function toolResultsOf(state: typeof MessagesAnnotation.State): number {
  return (state.messages.filter((message) => message.getType() === 'tool') as ToolMessage[]).length;
}

/**
 * A LangGraph ReAct graph of `steps` model steps, checkpointed to a SQLite file (WAL, synchronous=NORMAL, as keel).
 * `history` (defaults to 0): messages of an earlier conversation each run starts with.
 */
export function langGraphRunner(path: string, steps: number, history = 0) {
  const database = new Database(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', agentNode(steps, history))
    .addNode('tools', new ToolNode([lookup]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1) as AIMessage;
      return (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new SqliteSaver(database) });
  let thread = 0;
  const earlier = Array.from({ length: history }, (_, index) =>
    index % 2 === 0 ? new HumanMessage(`question ${index}`) : new AIMessage(`answer ${index}`),
  );
  return {
    async run(): Promise<void> {
      const result = await graph.invoke(
        { messages: [...earlier, new HumanMessage('go')] },
        // Two graph steps (agent, tools) a model step; the default limit of 25 would stop a long run.
        { configurable: { thread_id: `bench-${thread++}` }, recursionLimit: 2 * steps + 10 },
      );
      const last = result.messages.at(-1);
      if (last?.content !== 'done') throw new Error('the LangGraph run did not end with its answer');
    },
    close(): void {
      database.close();
    },
  };
}

/** LangGraph's side of the 5-step comparison (keel's is in five-step-subjects.ts), in a process of its own. */
export function langGraphFiveSteps(): Runner {
  const runner = langGraphRunner(join(temporaryDirectory(), 'langgraph.db'), FIVE_STEPS);
  return () => runner.run();
}
