// keel's Responses API requests beside the official `openai` SDK's. The SDK's request types are generated from
// OpenAI's published OpenAPI spec, so `ResponseCreateParamsNonStreaming` below is the spec's request schema: the
// parameters are written against it (type-checked by `tsc`), the SDK sends them to a real server, and keel must send
// the same JSON for the same conversation. (The `openai` package is in the workspace for chaos-peers; no copy of
// the spec itself is kept in the repository.)
import type { Message } from '@keel/core';
import { sendJson, startHttpTestServer } from '@keel/core/testing';
import OpenAI from 'openai';
import type { ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { openaiResponses } from '../index.js';

const ANSWER = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  model: 'gpt-5-mini',
  status: 'completed',
  output: [
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'ok', annotations: [] }],
    },
  ],
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
};

const conversation: Message[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris?' },
  {
    role: 'assistant',
    content: 'Checking.',
    toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    reasoning: [
      {
        type: 'thinking',
        text: 'Weather first.',
        providerMetadata: {
          openai: { itemId: 'rs_1', encryptedContent: 'gAAAA', summary: ['Weather first.'] },
        },
      },
    ],
  },
  { role: 'tool', toolCallId: 'call_1', toolName: 'get_weather', content: '{"temp":21}' },
];

// The same request, as a user of the official SDK writes it.
const official: ResponseCreateParamsNonStreaming = {
  model: 'gpt-5-mini',
  input: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
    {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'Weather first.' }],
      encrypted_content: 'gAAAA',
    },
    { role: 'assistant', content: 'Checking.' },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
  ],
  store: false,
  include: ['reasoning.encrypted_content'],
  tools: [
    {
      type: 'function',
      name: 'get_weather',
      description: 'Weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    },
  ],
  tool_choice: 'required',
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: false } },
  max_output_tokens: 400,
  reasoning: { effort: 'low', summary: 'auto' },
};

describe('openaiResponses beside the official SDK', () => {
  it('sends the JSON the official SDK sends for the same conversation', async () => {
    const server = await startHttpTestServer((_request, reply) => sendJson(reply, 200, ANSWER));
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 0 });
      await client.responses.create(official);
      const model = openaiResponses('gpt-5-mini', {
        apiKey: 'sk-test',
        baseUrl: server.url,
        reasoningEffort: 'low',
        reasoningSummary: 'auto',
      });
      await model.generate({
        messages: conversation,
        tools: [
          {
            name: 'get_weather',
            description: 'Weather',
            inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        toolChoice: 'required',
        outputSchema: { name: 'answer', schema: { type: 'object' } },
        maxOutputTokens: 400,
        signal: new AbortController().signal,
      });
      const [sdk, keel] = server.requests;
      expect(keel!.url).toBe(sdk!.url);
      expect(keel!.json()).toEqual(sdk!.json());
      expect(keel!.headers.authorization).toBe(sdk!.headers.authorization);
    } finally {
      await server.close();
    }
  });
});
