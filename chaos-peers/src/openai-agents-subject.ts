import type { AgentFile } from '@keel/agent-file';
import { CHILD_TOOL, type ChaosSubject, type RunEnding } from '@keel/chaos';
import {
  Agent,
  AgentsError,
  type HandoffInputData,
  handoff,
  OpenAIChatCompletionsModel,
  run,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { typedFailure, untypedEnding } from './endings.js';
import { peerTools, toolContext } from './peer-tools.js';

/**
 * The OpenAI Agents SDK as its users set it up: `run(agent, task, { maxTurns })` with the agent file's tools and
 * instructions, on an `OpenAI` client with its default settings (2 retries, a 10-minute timeout) pointed at the
 * simulated server, through `OpenAIChatCompletionsModel` (the simulated server speaks Chat Completions, not the
 * Responses API the SDK uses by default). Tracing is switched off: its exporter would post spans to OpenAI, which
 * cannot be reached here. No fallback: the SDK has none.
 *
 * In a nested scenario the agent of the file is the child, on the child's model, and the parent is an agent with the
 * same instructions whose one tool is `child.asTool({ toolName, toolDescription })`, as the SDK's documentation
 * composes agents; errors of the child reach the parent's model through the SDK's default tool error function (a
 * sentence with the error's text). The SDK runs the child inside the tool call: nothing of it is stored. In a handoff
 * scenario the parent's `handoffs` hold `handoff(child, { toolNameOverride, toolDescriptionOverride, inputFilter })`,
 * the filter dropping tool items as the SDK's own `removeAllTools` does, so the child reads the user's request.
 */
export function openAIAgentsSubject(file: AgentFile, worker: ChaosSubject['worker']): ChaosSubject {
  const maxTurns = file.limits.maxTurns ?? 20;
  setTracingDisabled(true);
  return {
    name: 'openai-agents',
    fallbacks: 0,
    ...(worker === undefined ? {} : { worker }),
    nests: true,
    handsOff: true,
    async prepare(environment) {
      const client = new OpenAI({ baseURL: environment.baseUrl, apiKey: 'simulated' });
      const model = new OpenAIChatCompletionsModel(client, environment.models[0]!.name);
      const childModel =
        environment.child === undefined
          ? undefined
          : new OpenAIChatCompletionsModel(client, environment.child.models[0]!.name);
      const keelTools = peerTools(file, environment);
      return {
        async run({ runId, task, signal }): Promise<RunEnding> {
          const worker = new Agent({
            name: childModel === undefined ? file.name : CHILD_TOOL.name,
            ...(file.instructions === undefined ? {} : { instructions: file.instructions }),
            model: childModel ?? model,
            tools: keelTools.map((keelTool) =>
              tool({
                name: keelTool.name,
                description: keelTool.description,
                parameters: keelTool.inputSchema as never,
                strict: false,
                execute: (input, _context, details) =>
                  keelTool.execute(
                    input,
                    toolContext(runId, details?.toolCall?.callId ?? 'call', details?.signal ?? signal),
                  ),
              }),
            ),
          });
          const agent =
            childModel === undefined
              ? worker
              : new Agent({
                  name: file.name,
                  ...(file.instructions === undefined ? {} : { instructions: file.instructions }),
                  model,
                  ...(environment.child?.handoff === true
                    ? {
                        handoffs: [
                          handoff(worker, {
                            toolNameOverride: CHILD_TOOL.name,
                            toolDescriptionOverride: CHILD_TOOL.description,
                            inputFilter: withoutTools,
                          }),
                        ],
                      }
                    : {
                        tools: [
                          worker.asTool({
                            toolName: CHILD_TOOL.name,
                            toolDescription: CHILD_TOOL.description,
                          }),
                        ],
                      }),
                });
          try {
            let output: unknown;
            if (environment.stream === true) {
              // Streamed as its users stream: `stream: true`, the text consumed as it arrives.
              const streamed = await run(agent, task, { maxTurns, signal, stream: true });
              for await (const _ of streamed.toTextStream()) {
                // Consumed as a UI would.
              }
              await streamed.completed;
              if (streamed.error !== null && streamed.error !== undefined) throw streamed.error;
              output = streamed.finalOutput;
            } else {
              output = (await run(agent, task, { maxTurns, signal })).finalOutput;
            }
            return {
              status: 'completed',
              output: typeof output === 'string' ? output : JSON.stringify(output),
              typed: true,
            };
          } catch (error) {
            return agentsEnding(error);
          }
        },
        close: async () => undefined,
      };
    },
  };
}

/** The run items a handoff's filter keeps: messages (no tool calls, tool outputs or handoff items). */
const KEPT_ITEMS = new Set(['message_output_item']);

/**
 * What the child is handed of the conversation: everything but tool items, as `removeAllTools` of
 * `@openai/agents-core/extensions` filters it (that subpath is not re-exported by `@openai/agents`).
 */
function withoutTools(data: HandoffInputData): HandoffInputData {
  return {
    ...data,
    inputHistory:
      typeof data.inputHistory === 'string'
        ? data.inputHistory
        : data.inputHistory.filter(
            (item) => item.type !== 'function_call' && item.type !== 'function_call_result',
          ),
    preHandoffItems: data.preHandoffItems.filter((item) => KEPT_ITEMS.has(item.type)),
    newItems: data.newItems.filter((item) => KEPT_ITEMS.has(item.type)),
  };
}

/** An Agents SDK or OpenAI client error by its class, with the HTTP status when there was one. */
function agentsEnding(error: unknown): RunEnding {
  if (error instanceof OpenAI.APIError) {
    return typedFailure(`${error.constructor.name}:${error.status ?? 'network'}`, error);
  }
  if (error instanceof AgentsError) return typedFailure(error.constructor.name, error);
  return untypedEnding(error);
}
