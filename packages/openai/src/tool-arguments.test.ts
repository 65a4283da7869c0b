// Tool calls whose arguments the model wrote as malformed JSON travel back to the server in the conversation. Servers
// such as vLLM parse those arguments (to render them with the chat template) and answer 400 when they are not a JSON
// object, so the provider must send valid JSON while the correction tells the model what was wrong.
import { agent, type ModelProvider, type ModelRequest, tool } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openai, openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const completion = (message: Record<string, unknown>, finishReason = 'stop') => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { function: { arguments: string } }[];
}

/** What vLLM does with the conversation it receives: every assistant tool call's arguments must parse to an object. */
function vllmRefusal(messages: WireMessage[]): string | undefined {
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) {
      try {
        const parsed: unknown = JSON.parse(call.function.arguments);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          return `arguments must be a JSON object, got ${call.function.arguments}`;
        }
      } catch (error) {
        return `Expecting value: ${(error as Error).message}`;
      }
    }
  }
  return undefined;
}

function withToolCall(argumentsText: string): ModelRequest {
  return {
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: argumentsText }],
      },
      { role: 'tool', toolCallId: 'call_1', toolName: 'get_weather', content: 'invalid', isError: true },
    ],
    signal: new AbortController().signal,
  };
}

type Make = (options: { baseUrl: string; model: string; apiKey: string }) => ModelProvider;

async function sentArguments(argumentsText: string, make: Make = openaiCompatible): Promise<string> {
  server = await startHttpTestServer((_request, response) =>
    sendJson(response, 200, completion({ content: 'ok' })),
  );
  await make({ baseUrl: server.url, model: 'm', apiKey: 'k' }).generate(withToolCall(argumentsText));
  const body = server.requests[0]!.json() as { messages: WireMessage[] };
  return body.messages[1]!.tool_calls![0]!.function.arguments;
}

describe('tool call arguments sent back', () => {
  it.each([
    ['a JSON object, byte for byte', '{ "city" : "Paris" }', '{ "city" : "Paris" }'],
    ['an empty text (a tool without parameters) as {}', '', '{}'],
    ['malformed JSON as {}', '{"city": "Par', '{}'],
    ['JSON that is not an object as {}', '["Paris"]', '{}'],
    ['a JSON string as {}', '"Paris"', '{}'],
  ])('sends %s', async (_label, argumentsText, expected) => {
    expect(await sentArguments(argumentsText)).toBe(expected);
  });

  it('does the same for openai()', async () => {
    const make: Make = ({ baseUrl, apiKey }) => openai('gpt-test', { baseUrl, apiKey });
    expect(await sentArguments('{"city": "Par', make)).toBe('{}');
  });

  it('a run against a vLLM-like server corrects malformed arguments instead of failing with a 400', async () => {
    server = await startHttpTestServer((received, response) => {
      const body = received.json() as { messages: WireMessage[] };
      const refusal = vllmRefusal(body.messages);
      if (refusal !== undefined) {
        sendJson(response, 400, { object: 'error', message: refusal, type: 'BadRequestError', code: 400 });
      } else if (received.index === 1) {
        const call = {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city": "Par' },
        };
        sendJson(response, 200, completion({ content: null, tool_calls: [call] }, 'tool_calls'));
      } else if (received.index === 2) {
        const call = {
          id: 'call_2',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        };
        sendJson(response, 200, completion({ content: null, tool_calls: [call] }, 'tool_calls'));
      } else sendJson(response, 200, completion({ content: 'Sunny in Paris.' }));
    });
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: ({ city }: { city: string }) => `Sunny in ${city}`,
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'm', provider: 'vllm' });
    const result = await agent({ model, tools: [weather] }).run('Weather in Paris?');
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ status: 'completed', output: 'Sunny in Paris.' });
    // The correction the model received names what was wrong with the arguments it wrote.
    const second = server.requests[1]!.json() as { messages: WireMessage[] };
    const correction = second.messages.find((message) => message.role === 'tool');
    expect(correction?.content).toContain('not valid JSON');
    expect(correction?.content).toContain('Par');
  });
});
