import { KeelError, type ModelRequest } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openai, openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
}

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-test-2025',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    ...extra,
  };
}

async function serve(body: unknown) {
  server = await startHttpTestServer((_request, response) =>
    sendJson(response, 200, body, { 'x-request-id': 'req_123' }),
  );
  return server;
}

describe('openai wire format', () => {
  it('sends the request body and headers the Chat Completions API expects', async () => {
    const { url, requests } = await serve(completion({ content: 'ok' }));
    const model = openai('gpt-test', {
      apiKey: 'sk-secret',
      baseUrl: `${url}/v1/`,
      organization: 'org-1',
      headers: { 'X-Extra': 'yes' },
    });
    await model.generate(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
            ],
          },
          { role: 'tool', toolCallId: 'call_a', toolName: 'get_weather', content: '{"temp":21}' },
          { role: 'tool', toolCallId: 'call_b', toolName: 'get_weather', content: 'timeout', isError: true },
        ],
        tools: [{ name: 'get_weather', description: 'Weather', inputSchema: { type: 'object' } }],
        toolChoice: { name: 'get_weather' },
        outputSchema: {
          name: 'answer',
          schema: { type: 'object', properties: { text: { type: 'string' } } },
        },
        maxOutputTokens: 300,
        temperature: 0.2,
      }),
    );
    expect(requests).toHaveLength(1);
    const received = requests[0]!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBe('Bearer sk-secret');
    expect(received.headers['openai-organization']).toBe('org-1');
    expect(received.headers['x-extra']).toBe('yes');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.json()).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'call_b',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'call_b', content: 'timeout' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object', properties: { text: { type: 'string' } } } },
      },
      max_completion_tokens: 300,
      temperature: 0.2,
    });
  });

  it('maps string tool choices, omits absent fields, and uses max_tokens for compatibles', async () => {
    const { url, requests } = await serve(completion({ content: 'ok' }));
    const model = openaiCompatible({ baseUrl: url, model: 'llama', strictJsonSchema: true });
    await model.generate(
      request({ tools: [{ name: 't', description: 'd', inputSchema: {} }], toolChoice: 'required' }),
    );
    await model.generate(
      request({ maxOutputTokens: 50, outputSchema: { name: 'o', schema: { type: 'object' } } }),
    );
    const [first, second] = requests.map((received) => received.json() as Record<string, unknown>);
    expect(requests[0]!.url).toBe('/chat/completions');
    expect(requests[0]!.headers.authorization).toBeUndefined();
    expect(first!.tool_choice).toBe('required');
    expect(Object.keys(first!).sort()).toEqual(['messages', 'model', 'tool_choice', 'tools']);
    expect(second!.max_tokens).toBe(50);
    expect(second!.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'o', schema: { type: 'object' }, strict: true },
    });
  });

  it('returns text, the reported model and usage', async () => {
    const { url } = await serve(completion({ content: 'Hello there' }));
    const response = await openaiCompatible({ baseUrl: url, model: 'gpt-test' }).generate(request());
    expect(response).toEqual({
      content: 'Hello there',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 5 },
      model: 'gpt-test-2025',
      requestId: 'req_123',
    });
  });

  it('returns parallel tool calls in order, with arguments as JSON text', async () => {
    const body = completion({
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: { zone: 'CET' } } },
      ],
    });
    body.choices[0]!.finish_reason = 'tool_calls';
    const { url } = await serve(body);
    const response = await openaiCompatible({ baseUrl: url, model: 'm' }).generate(request());
    expect(response.content).toBe('');
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_2', name: 'get_time', arguments: '{"zone":"CET"}' },
    ]);
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['stop', 'stop'],
    ['something_new', 'other'],
  ])('maps finish_reason %s to %s', async (wire, expected) => {
    const body = completion({ content: 'partial' });
    body.choices[0]!.finish_reason = wire;
    const { url } = await serve(body);
    const response = await openaiCompatible({ baseUrl: url, model: 'm' }).generate(request());
    expect(response.finishReason).toBe(expected);
  });

  it('reports tool_calls when a compatible says stop beside tool calls, and refusals as content_filter', async () => {
    const toolBody = completion({
      content: '',
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    const { url } = await serve(toolBody);
    expect((await openaiCompatible({ baseUrl: url, model: 'm' }).generate(request())).finishReason).toBe(
      'tool_calls',
    );
    await server?.close();
    const { url: refusalUrl } = await serve(
      completion({ content: null, refusal: 'I cannot help with that.' }),
    );
    const refused = await openaiCompatible({ baseUrl: refusalUrl, model: 'm' }).generate(request());
    expect(refused).toMatchObject({ content: 'I cannot help with that.', finishReason: 'content_filter' });
  });

  it('reads the API key from the env option, never from the process on its own', async () => {
    const { url, requests } = await serve(completion({ content: 'ok' }));
    await openai('gpt-test', { baseUrl: url, env: { OPENAI_API_KEY: 'sk-from-env' } }).generate(request());
    expect(requests[0]!.headers.authorization).toBe('Bearer sk-from-env');
    const previous = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-process';
    try {
      expect(() => openai('gpt-test')).toThrow(/no API key/);
    } finally {
      if (previous === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = previous;
    }
  });

  it('rejects bad options with config.invalid naming what to fix', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => openai(''), /model must be/],
      [() => openai('m', { apiKey: 'k', baseUrl: 'not a url' }), /baseUrl must be an absolute/],
      [() => openai('m', { apiKey: 'k', baseUrl: 'ftp://host' }), /http or https/],
      [() => openaiCompatible({ baseUrl: 'http://h', model: ' ' }), /model must be/],
      [
        () => openaiCompatible({ baseUrl: 'http://h', model: 'm', contextWindowTokens: -1 }),
        /contextWindowTokens/,
      ],
      [() => openaiCompatible({ baseUrl: 'http://h', model: 'm', provider: '' }), /provider must be/],
      [() => openaiCompatible(undefined as never), /options must be an object such as \{ baseUrl/],
    ];
    for (const [make, message] of cases) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(KeelError.isInstance(thrown) && thrown.code).toBe('config.invalid');
      expect((thrown as Error).message).toMatch(message);
    }
  });

  it('exposes provider, model and context window', () => {
    const model = openaiCompatible({
      baseUrl: 'http://h',
      model: 'm',
      provider: 'ollama',
      contextWindowTokens: 8192,
    });
    expect([model.provider, model.model, model.contextWindowTokens]).toEqual(['ollama', 'm', 8192]);
    expect(openai('gpt-test', { apiKey: 'k' }).provider).toBe('openai');
  });
});
