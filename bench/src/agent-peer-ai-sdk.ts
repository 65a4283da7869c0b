// The Vercel AI SDK's subject of the peer comparison (see agent-peers.ts): it imports the AI SDK alone.
import { tool as aiSdkTool, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  type AgentRunner,
  description,
  lookup,
  lookupInput,
  MAX_STEPS,
  PEER_RUN_STEPS,
} from './agent-peers.js';

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
