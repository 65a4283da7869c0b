// The OpenAI Agents SDK's subject of the peer comparison (see agent-peers.ts): it imports the Agents SDK alone.
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
import {
  type AgentRunner,
  description,
  lookup,
  lookupInput,
  MAX_STEPS,
  PEER_RUN_STEPS,
} from './agent-peers.js';

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
