// The same agent run in keel and in two peers: a model that calls a zod-typed `lookup` tool once a step, then
// answers, and the tool, both in process and doing almost nothing, so that each measures its own loop. Each peer gets
// its own fake model through its own model interface: the Vercel AI SDK's `MockLanguageModelV3` (from `ai/test`)
// under `generateText`, and an object implementing the OpenAI Agents SDK's `Model` under `run`.

import { agent, tool as keelTool } from '@keel/core';
import {
  Agent,
  type Model as OpenAIAgentsModel,
  type ModelRequest as OpenAIAgentsRequest,
  type ModelResponse as OpenAIAgentsResponse,
  tool as openAIAgentsTool,
  run as runOpenAIAgent,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { tool as aiSdkTool, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { stepModel } from './step-agent.js';

/** Model calls per run: four tool steps, then the answer. */
export const PEER_RUN_STEPS = 5;
/** Each framework's bound on steps, well above what the run needs. */
const MAX_STEPS = 10;

const lookupInput = z.object({ key: z.string() });
const lookup = ({ key }: { key: string }) => ({ value: key });
const description = 'Looks a key up';

/** Runs one whole agent run, resolving when its answer is in; rejects if the run did not end with the answer. */
export type AgentRunner = () => Promise<void>;

/** keel: `agent().run()` with the model of the keel benchmark and a zod tool. */
export function keelRunner(): AgentRunner {
  const assistant = agent({
    model: stepModel(PEER_RUN_STEPS),
    tools: [keelTool({ name: 'lookup', description, input: lookupInput, idempotent: true, execute: lookup })],
    limits: { maxTurns: MAX_STEPS },
  });
  return async () => {
    const result = await assistant.run('go');
    if (result.status !== 'completed' || result.output !== 'done')
      throw new Error(`keel run ended ${result.status}`);
  };
}

/** The Vercel AI SDK: `generateText` with `MockLanguageModelV3`, a zod tool and `stopWhen: stepCountIs(10)`. */
export function aiSdkRunner(): AgentRunner {
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  };
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const toolResults = options.prompt.filter((message) => message.role === 'tool').length;
      if (toolResults >= PEER_RUN_STEPS - 1) {
        return {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call_${toolResults}`,
            toolName: 'lookup',
            input: `{"key":"k${toolResults}"}`,
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
  const tools = { lookup: aiSdkTool({ description, inputSchema: lookupInput, execute: lookup }) };
  return async () => {
    const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(MAX_STEPS) });
    if (result.text !== 'done' || result.steps.length !== PEER_RUN_STEPS)
      throw new Error(`AI SDK run ended after ${result.steps.length} steps with "${result.text}"`);
  };
}

/** A fake model in the OpenAI Agents SDK's own interface, answering as the others do. */
class StepModel implements OpenAIAgentsModel {
  async getResponse(request: OpenAIAgentsRequest): Promise<OpenAIAgentsResponse> {
    const input = typeof request.input === 'string' ? [] : request.input;
    const toolResults = input.filter((item) => item.type === 'function_call_result').length;
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    if (toolResults >= PEER_RUN_STEPS - 1) {
      return {
        usage,
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'done' }],
          },
        ],
      };
    }
    return {
      usage,
      output: [
        {
          type: 'function_call',
          callId: `call_${toolResults}`,
          name: 'lookup',
          arguments: `{"key":"k${toolResults}"}`,
          status: 'completed',
        },
      ],
    };
  }

  getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this benchmark');
  }
}

/**
 * The OpenAI Agents SDK: `run(agent)` with a fake `Model` and a zod tool. Tracing is switched off: its exporter
 * would send spans to OpenAI, which cannot be reached here (and keel's counterpart, events, has no listener).
 */
export function openAIAgentsRunner(): AgentRunner {
  setTracingDisabled(true);
  const assistant = new Agent({
    name: 'bench',
    model: new StepModel(),
    tools: [openAIAgentsTool({ name: 'lookup', description, parameters: lookupInput, execute: lookup })],
  });
  return async () => {
    const result = await runOpenAIAgent(assistant, 'go', { maxTurns: MAX_STEPS });
    if (result.finalOutput !== 'done') throw new Error(`OpenAI Agents run ended with ${result.finalOutput}`);
  };
}
