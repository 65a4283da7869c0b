import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

function message(content: unknown[], stopReason = 'end_turn', extra: Record<string, unknown> = {}) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test-2025',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 },
    ...extra,
  };
}

async function serve(body: unknown) {
  server = await startHttpTestServer((_request, response) =>
    sendJson(response, 200, body, { 'request-id': 'req_ant_1' }),
  );
  // Bodies are compared whole here; cache breakpoints have their own tests (cache-breakpoints.test.ts).
  const options = { apiKey: 'sk-ant-secret', baseUrl: `${server.url}/`, promptCaching: false };
  return { server, model: anthropic('claude-test', options) };
}

describe('anthropic wire format', () => {
  it('sends system top-level, tool_use blocks, merged tool results, tools and headers', async () => {
    const { server, model } = await serve(message([{ type: 'text', text: 'ok' }]));
    await model.generate(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: 'Checking.',
            toolCalls: [
              { id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { id: 'toolu_b', name: 'get_weather', arguments: 'not json' },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_a', toolName: 'get_weather', content: '{"temp":21}' },
          {
            role: 'tool',
            toolCallId: 'toolu_b',
            toolName: 'get_weather',
            content: 'bad input',
            isError: true,
          },
          { role: 'user', content: 'And Oslo?' },
        ],
        tools: [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } }],
        toolChoice: 'required',
        temperature: 0.3,
      }),
    );
    expect(server.requests).toHaveLength(1);
    const received = server.requests[0]!;
    expect(received.url).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe('sk-ant-secret');
    expect(received.headers['anthropic-version']).toBe('2023-06-01');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.json()).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"temp":21}' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'bad input', is_error: true },
            { type: 'text', text: 'And Oslo?' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
      temperature: 0.3,
    });
  });

  it('never sends an assistant turn with no content or only whitespace (the API refuses content: [])', async () => {
    const { server, model } = await serve(message([{ type: 'text', text: 'ok' }]));
    await model.generate(
      request({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'Are you there?' },
          { role: 'assistant', content: ' \n ' },
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: '\n',
            toolCalls: [{ id: 't1', name: 'get_weather', arguments: '{}' }],
          },
          { role: 'tool', toolCallId: 't1', toolName: 'get_weather', content: 'sunny' },
          { role: 'assistant', content: '', toolCalls: [] },
        ],
      }),
    );
    const body = server.requests[0]!.json() as { messages: unknown[] };
    // Whitespace-only text is refused too ("text content blocks must contain non-whitespace text").
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Are you there?' },
          { type: 'text', text: 'Weather?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }] },
    ]);
  });

  it('sends the anthropic-version given by option, and refuses one that is not a YYYY-MM-DD date', async () => {
    const { server } = await serve(message([{ type: 'text', text: 'ok' }]));
    await anthropic('c', { apiKey: 'k', baseUrl: server.url, version: '2023-01-01' }).generate(request());
    expect(server.requests[0]!.headers['anthropic-version']).toBe('2023-01-01');
    for (const version of ['latest', '2023-6-1', '2023-06-01\r\nx-api-key: stolen', '', 20230601]) {
      expect(() => anthropic('c', { apiKey: 'k', version: version as string })).toThrow(
        expect.objectContaining({
          code: 'config.invalid',
          message: expect.stringMatching(
            /version must be an Anthropic API version date such as "2023-06-01"/,
          ),
        }),
      );
    }
  });

  it('fails stop_reason model_context_window_exceeded as provider.context_overflow, not max_tokens', async () => {
    const { model } = await serve(
      message([{ type: 'text', text: 'The answer is' }], 'model_context_window_exceeded'),
    );
    const error = await model.generate(request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'provider.context_overflow',
      retryable: false,
      provider: 'anthropic',
      data: { stopReason: 'model_context_window_exceeded', partialOutput: 'The answer is' },
    });
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    [{ name: 'get_weather' }, { type: 'tool', name: 'get_weather' }],
  ] as const)('maps tool choice %j', async (choice, wire) => {
    const { server, model } = await serve(message([{ type: 'text', text: 'ok' }]));
    const tools = [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } }];
    await model.generate(request({ tools, toolChoice: choice, maxOutputTokens: 100 }));
    const body = server.requests[0]!.json() as Record<string, unknown>;
    expect(body.tool_choice).toEqual(wire);
    expect(body.max_tokens).toBe(100);
  });

  it('returns text, usage with cached input tokens, and the reported model', async () => {
    const { model } = await serve(
      message([
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'there' },
      ]),
    );
    expect(await model.generate(request())).toEqual({
      content: 'Hello there',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 25, outputTokens: 7, cachedInputTokens: 5, cacheWriteInputTokens: 0 },
      model: 'claude-test-2025',
      requestId: 'req_ant_1',
    });
  });

  it('returns parallel tool calls with their input as JSON text, skipping thinking blocks', async () => {
    const { model } = await serve(
      message(
        [
          { type: 'thinking', thinking: 'hmm', signature: 'x' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
        'tool_use',
      ),
    );
    const response = await model.generate(request());
    expect(response.content).toBe('Let me check.');
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([
      { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'toolu_2', name: 'get_time', arguments: '{}' },
    ]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['some_future_reason', 'other'],
  ])('maps stop_reason %s to %s', async (wire, expected) => {
    const { model } = await serve(message([{ type: 'text', text: 'x' }], wire));
    expect((await model.generate(request())).finishReason).toBe(expected);
  });

  it('asks for structured output with a forced tool and returns its input as the content', async () => {
    const { server, model } = await serve(
      message(
        [{ type: 'tool_use', id: 'toolu_o', name: 'answer', input: { city: 'Paris', temp: 21 } }],
        'tool_use',
      ),
    );
    const schema = { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' } } };
    const response = await model.generate(request({ outputSchema: { name: 'answer', schema } }));
    expect(response).toMatchObject({
      content: '{"city":"Paris","temp":21}',
      toolCalls: [],
      finishReason: 'stop',
    });
    const body = server.requests[0]!.json() as Record<string, unknown>;
    expect(body.tools).toEqual([
      { name: 'answer', description: expect.stringContaining('final answer'), input_schema: schema },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'answer' });
  });

  it('lets the model call real tools before the structured answer, and wraps non-object schemas', async () => {
    const { server, model } = await serve(
      message(
        [{ type: 'tool_use', id: 'toolu_o', name: 'cities', input: { value: ['Paris', 'Rome'] } }],
        'tool_use',
      ),
    );
    const tools = [{ name: 'search', description: 'Search', inputSchema: { type: 'object' } }];
    const schema = { type: 'array', items: { type: 'string' } };
    const response = await model.generate(request({ tools, outputSchema: { name: 'cities', schema } }));
    expect(response).toMatchObject({ content: '["Paris","Rome"]', toolCalls: [], finishReason: 'stop' });
    const body = server.requests[0]!.json() as {
      tools: { name: string; input_schema: unknown }[];
      tool_choice: unknown;
    };
    expect(body.tools.map((tool) => tool.name)).toEqual(['search', 'cities']);
    expect(body.tools[1]!.input_schema).toEqual({
      type: 'object',
      properties: { value: schema },
      required: ['value'],
    });
    expect(body.tool_choice).toEqual({ type: 'any' });
  });

  it('refuses an output schema named like a tool', async () => {
    const { model } = await serve(message([]));
    const tools = [{ name: 'answer', description: 'd', inputSchema: { type: 'object' } }];
    const error = await model
      .generate(request({ tools, outputSchema: { name: 'answer', schema: { type: 'object' } } }))
      .catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('config.invalid');
  });

  it('reads the key from env, accepts proxy credentials in headers, and rejects bad options', async () => {
    const { server } = await serve(message([{ type: 'text', text: 'ok' }]));
    await anthropic('c', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'sk-env' } }).generate(request());
    expect(server.requests[0]!.headers['x-api-key']).toBe('sk-env');
    await anthropic('c', { baseUrl: server.url, headers: { Authorization: 'Bearer proxy' } }).generate(
      request(),
    );
    expect(server.requests[1]!.headers['x-api-key']).toBeUndefined();
    expect(server.requests[1]!.headers.authorization).toBe('Bearer proxy');

    const cases: [() => unknown, RegExp][] = [
      [() => anthropic('c'), /no API key/],
      [() => anthropic('', { apiKey: 'k' }), /model must be/],
      [() => anthropic('c', { apiKey: 'k', baseUrl: 'nope' }), /baseUrl/],
      [() => anthropic('c', { apiKey: 'k', maxOutputTokens: 0 }), /maxOutputTokens/],
      [() => anthropic('c', { apiKey: 'k', contextWindowTokens: 1.5 }), /contextWindowTokens/],
      [() => anthropic('c', { apiKey: 'k', headers: { a: 1 as never } }), /header a/],
    ];
    for (const [make, pattern] of cases) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(KeelError.isInstance(thrown) && thrown.code).toBe('config.invalid');
      expect((thrown as Error).message).toMatch(pattern);
    }
    const model = anthropic('c', { apiKey: 'k', contextWindowTokens: 200_000, provider: 'bedrock-proxy' });
    expect([model.provider, model.model, model.contextWindowTokens]).toEqual(['bedrock-proxy', 'c', 200_000]);
  });
});
