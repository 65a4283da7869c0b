// The Responses API wire: the request body, answers with reasoning items and function calls, usage, errors, streams
// and background mode's resumable streams, against a real HTTP server on 127.0.0.1.
import { KeelError, type Message, type ModelRequest } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer, startSse, writeSse } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiResponses } from '../index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

const REASONING_ITEM = {
  type: 'reasoning',
  id: 'rs_1',
  summary: [{ type: 'summary_text', text: 'Need the weather.' }],
  encrypted_content: 'gAAAA-encrypted',
};
const CALL_ITEM = {
  type: 'function_call',
  id: 'fc_1',
  call_id: 'call_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
};
const USAGE = {
  input_tokens: 1_200,
  input_tokens_details: { cached_tokens: 1_024 },
  output_tokens: 300,
  output_tokens_details: { reasoning_tokens: 256 },
  total_tokens: 1_500,
};

function response(output: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_1',
    object: 'response',
    model: 'gpt-test-2025',
    status: 'completed',
    output,
    usage: USAGE,
    ...extra,
  };
}

const message = (text: string) => ({
  type: 'message',
  id: 'msg_1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

async function serve(handler: Parameters<typeof startHttpTestServer>[0]) {
  server = await startHttpTestServer(handler);
  return server;
}

const event = (type: string, sequence: number, fields: Record<string, unknown> = {}) => ({
  event: type,
  data: { type, sequence_number: sequence, ...fields },
});

describe('openaiResponses: requests', () => {
  it('sends input items, function tools, tool choice, JSON output, limits and reasoning back as the API wants them', async () => {
    const { url, requests } = await serve((_request, reply) =>
      sendJson(reply, 200, response([message('ok')])),
    );
    const model = openaiResponses('gpt-test', {
      apiKey: 'sk-secret',
      baseUrl: `${url}/v1`,
      reasoningEffort: 'low',
      reasoningSummary: 'auto',
      project: 'proj_1',
    });
    const conversation: Message[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        reasoning: [
          {
            type: 'thinking',
            text: 'Need the weather.',
            providerMetadata: {
              openai: { itemId: 'rs_1', encryptedContent: 'gAAAA-encrypted', summary: ['Need the weather.'] },
            },
          },
          // Another provider's reasoning: not an item this API made, so not sent.
          { type: 'thinking', text: 'claude thought', signature: 'sig' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', toolName: 'get_weather', content: '{"temp":21}' },
    ];
    await model.generate(
      request({
        messages: conversation,
        tools: [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } }],
        toolChoice: { name: 'get_weather' },
        outputSchema: { name: 'answer', schema: { type: 'object' } },
        maxOutputTokens: 500,
        temperature: 0.5,
      }),
    );
    const received = requests[0]!;
    expect(received.url).toBe('/v1/responses');
    expect(received.headers.authorization).toBe('Bearer sk-secret');
    expect(received.headers['openai-project']).toBe('proj_1');
    expect(received.json()).toEqual({
      model: 'gpt-test',
      input: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{ type: 'summary_text', text: 'Need the weather.' }],
          encrypted_content: 'gAAAA-encrypted',
        },
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
          parameters: { type: 'object' },
          strict: false,
        },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: false } },
      max_output_tokens: 500,
      temperature: 0.5,
      reasoning: { effort: 'low', summary: 'auto' },
    });
  });

  it('refuses bad options with config.invalid, naming them', () => {
    const refused = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return KeelError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
      }
      return 'accepted';
    };
    expect(refused(() => openaiResponses('m', {}))).toMatch(/config.invalid: .*no API key/);
    expect(refused(() => openaiResponses('m', { apiKey: 'k', background: true, store: false }))).toMatch(
      /background mode needs store: true/,
    );
    expect(refused(() => openaiResponses('m', { apiKey: 'k', reasoningSummary: 'long' as never }))).toMatch(
      /reasoningSummary must be one of/,
    );
    expect(
      refused(() => openaiResponses('m', { apiKey: 'k', maxTokensField: 'max_tokens' } as never)),
    ).toMatch(/Unknown openaiResponses\(\) option maxTokensField/);
  });
});

describe('openaiResponses: answers', () => {
  it('returns text, function calls, reasoning items (kept to be sent back) and usage with cached and reasoning tokens', async () => {
    await serve((_request, reply) =>
      sendJson(reply, 200, response([REASONING_ITEM, message('Checking.'), CALL_ITEM]), {
        'x-request-id': 'req_9',
      }),
    );
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    expect(await model.generate(request())).toEqual({
      content: 'Checking.',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      reasoning: [
        {
          type: 'thinking',
          text: 'Need the weather.',
          providerMetadata: {
            openai: { itemId: 'rs_1', summary: ['Need the weather.'], encryptedContent: 'gAAAA-encrypted' },
          },
        },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 1_200, outputTokens: 300, reasoningTokens: 256, cachedInputTokens: 1_024 },
      model: 'gpt-test-2025',
      requestId: 'req_9',
    });
  });

  it.each([
    ['max_output_tokens', 'length'],
    ['content_filter', 'content_filter'],
  ])('an incomplete response (%s) ends with finish reason %s', async (reason, finishReason) => {
    await serve((_request, reply) =>
      sendJson(
        reply,
        200,
        response([message('Half')], { status: 'incomplete', incomplete_details: { reason } }),
      ),
    );
    const answer = await openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url }).generate(
      request(),
    );
    expect(answer.finishReason).toBe(finishReason);
  });

  it.each([
    [{ code: 'rate_limit_exceeded', message: 'slow down' }, 'provider.rate_limited', true],
    [{ code: 'server_error', message: 'oops' }, 'provider.server_error', true],
    [{ code: 'context_length_exceeded', message: 'too long' }, 'provider.context_overflow', false],
  ])('a failed response (%o) is classified as %s', async (error, code, retryable) => {
    await serve((_request, reply) => sendJson(reply, 200, response([], { status: 'failed', error })));
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    await expect(model.generate(request())).rejects.toMatchObject({ code, retryable });
  });

  it('classifies error statuses and bodies as the Chat Completions provider does', async () => {
    await serve((_request, reply) =>
      sendJson(reply, 429, {
        error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' },
      }),
    );
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    await expect(model.generate(request())).rejects.toMatchObject({ code: 'provider.quota_exhausted' });
  });
});

describe('openaiResponses: streams', () => {
  const streamed = [
    event('response.created', 0, { response: response([], { status: 'in_progress', usage: null }) }),
    event('response.output_item.done', 1, { output_index: 0, item: REASONING_ITEM }),
    event('response.output_text.delta', 2, { output_index: 1, content_index: 0, delta: 'Check' }),
    event('response.output_text.delta', 3, { output_index: 1, content_index: 0, delta: 'ing.' }),
    event('response.output_item.done', 4, { output_index: 1, item: message('Checking.') }),
    event('response.function_call_arguments.delta', 5, { output_index: 2, delta: '{"city":' }),
    event('response.output_item.done', 6, { output_index: 2, item: CALL_ITEM }),
    event('response.completed', 7, { response: response([REASONING_ITEM, message('Checking.'), CALL_ITEM]) }),
  ];

  it('delivers text deltas and returns the completed response, reasoning and calls included', async () => {
    await serve((_request, reply) => {
      startSse(reply);
      writeSse(reply, streamed);
      reply.end();
    });
    const deltas: string[] = [];
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    const answer = await model.generate(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(server!.requests[0]!.json()).toMatchObject({ stream: true });
    expect(deltas).toEqual(['Check', 'ing.']);
    expect(answer).toMatchObject({
      content: 'Checking.',
      toolCalls: [{ id: 'call_1', name: 'get_weather' }],
      finishReason: 'tool_calls',
      usage: { cachedInputTokens: 1_024, reasoningTokens: 256 },
    });
    expect(answer.reasoning).toHaveLength(1);
  });

  it('a response.failed or error event throws its classified error', async () => {
    await serve((_request, reply) => {
      startSse(reply);
      writeSse(reply, [
        streamed[0]!,
        event('response.failed', 1, {
          response: response([], {
            status: 'failed',
            error: { code: 'rate_limit_exceeded', message: 'slow' },
          }),
        }),
      ]);
      reply.end();
    });
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    await expect(model.generate(request({ onTextDelta: () => undefined }))).rejects.toMatchObject({
      code: 'provider.rate_limited',
    });
  });

  it('a stream cut before response.completed is provider.invalid_response, as a cut chat stream is', async () => {
    await serve((_request, reply) => {
      startSse(reply);
      writeSse(reply, streamed.slice(0, 3));
      reply.socket?.resetAndDestroy();
    });
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url });
    await expect(model.generate(request({ onTextDelta: () => undefined }))).rejects.toMatchObject({
      code: 'provider.invalid_response',
      retryable: true,
    });
  });

  it('in background mode, resumes a cut stream with starting_after, delivering no delta twice', async () => {
    await serve((recorded, reply) => {
      startSse(reply);
      if (recorded.method === 'POST') {
        writeSse(reply, streamed.slice(0, 3));
        reply.write('', () => reply.socket?.resetAndDestroy());
        return;
      }
      writeSse(reply, streamed.slice(3));
      reply.end();
    });
    const deltas: string[] = [];
    const model = openaiResponses('gpt-test', { apiKey: 'k', baseUrl: server!.url, background: true });
    const answer = await model.generate(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(server!.requests.map((recorded) => `${recorded.method} ${recorded.url}`)).toEqual([
      'POST /responses',
      'GET /responses/resp_1?stream=true&starting_after=2',
    ]);
    expect(server!.requests[0]!.json()).toMatchObject({ background: true, store: true, stream: true });
    expect(server!.requests[0]!.json()).not.toHaveProperty('include');
    expect(deltas).toEqual(['Check', 'ing.']);
    expect(answer.content).toBe('Checking.');
  });

  it('in background mode, gives up after maxStreamResumes with provider.invalid_response', async () => {
    await serve((_recorded, reply) => {
      startSse(reply);
      writeSse(reply, streamed.slice(0, 1));
      reply.write('', () => reply.socket?.resetAndDestroy());
    });
    const model = openaiResponses('gpt-test', {
      apiKey: 'k',
      baseUrl: server!.url,
      background: true,
      maxStreamResumes: 2,
    });
    await expect(model.generate(request())).rejects.toMatchObject({ code: 'provider.invalid_response' });
    expect(server!.requests).toHaveLength(3);
  });
});
