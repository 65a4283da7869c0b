import type { AgentFile } from '@keel/agent-file';
import type { ChaosSubject, RunEnding } from '@keel/chaos';
import { peerTools, toolContext } from './peer-tools.js';

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/**
 * The loop people write first: POST to Chat Completions, run the tool calls, repeat until an answer or the step
 * bound. No retry, no timeout, no fallback; whatever goes wrong is thrown as it comes.
 */
export function naiveSubject(file: AgentFile, worker: ChaosSubject['worker']): ChaosSubject {
  const maxTurns = file.limits.maxTurns ?? 20;
  return {
    name: 'naive-loop',
    fallbacks: 0,
    ...(worker === undefined ? {} : { worker }),
    async prepare(environment) {
      const keelTools = peerTools(file, environment);
      const byName = new Map(keelTools.map((keelTool) => [keelTool.name, keelTool]));
      const tools = keelTools.map((keelTool) => ({
        type: 'function',
        function: {
          name: keelTool.name,
          description: keelTool.description,
          parameters: keelTool.inputSchema,
        },
      }));
      const model = environment.models[0]!.name;
      return {
        async run({ runId, task, signal }): Promise<RunEnding> {
          const messages: WireMessage[] = [
            ...(file.instructions === undefined ? [] : [{ role: 'system', content: file.instructions }]),
            { role: 'user', content: task },
          ];
          for (let turn = 0; turn < maxTurns; turn++) {
            const response = await fetch(`${environment.baseUrl}/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ model, messages, tools }),
              signal,
            });
            if (!response.ok) throw new Error(`The model API answered ${response.status}`);
            const body = (await response.json()) as { choices: { message: WireMessage }[] };
            const message = body.choices[0]!.message;
            messages.push(message);
            if (message.tool_calls === undefined || message.tool_calls.length === 0) {
              return { status: 'completed', output: message.content ?? '', typed: true };
            }
            for (const call of message.tool_calls) {
              const keelTool = byName.get(call.function.name);
              if (keelTool === undefined)
                throw new Error(`The model called an unknown tool ${call.function.name}`);
              const input = JSON.parse(call.function.arguments) as unknown;
              const output = await keelTool.execute(input, toolContext(runId, call.id, signal));
              messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(output) });
            }
          }
          throw new Error(`No answer after ${maxTurns} turns`);
        },
        close: async () => undefined,
      };
    },
  };
}
