// What only the Chat Completions stream does. Cut-off and broken streams, errors mid-stream, aborts and a server that
// ignores stream: true are the ModelProvider contract's (contract.test.ts).
import { agent, type ModelRequest } from '@keel/core';
import {
  type HttpTestServer,
  type ServerSentEvent,
  startHttpTestServer,
  startSse,
  writeSse,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompatible } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): ServerSentEvent {
  return {
    data: { id: 'c1', model: 'gpt-stream', choices: [{ index: 0, delta, finish_reason: finishReason }] },
  };
}

const USAGE: ServerSentEvent = {
  data: { id: 'c1', model: 'gpt-stream', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } },
};

async function streamOf(events: ServerSentEvent[]) {
  server = await startHttpTestServer((_request, response) => {
    startSse(response);
    writeSse(response, events);
    response.end();
  });
  return openaiCompatible({ baseUrl: server.url, model: 'm' });
}

function streaming(deltas: string[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'Hi' }],
    signal: new AbortController().signal,
    onTextDelta: (delta) => deltas.push(delta),
    ...overrides,
  };
}

describe('openai streaming', () => {
  it('asks for a stream with usage, delivers text deltas as they arrive, and returns the whole answer', async () => {
    const model = await streamOf([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      USAGE,
      { data: '[DONE]' },
    ]);
    const deltas: string[] = [];
    const response = await model.generate(streaming(deltas));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(response).toEqual({
      content: 'Hello',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 9, outputTokens: 4 },
      model: 'gpt-stream',
    });
    const body = server!.requests[0]!.json() as Record<string, unknown>;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(server!.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('joins parallel tool call fragments by index', async () => {
    const model = await streamOf([
      chunk({ role: 'assistant', content: null }),
      chunk({
        tool_calls: [
          { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      USAGE,
      { data: '[DONE]' },
    ]);
    const deltas: string[] = [];
    const response = await model.generate(streaming(deltas));
    expect(deltas).toEqual([]);
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_b', name: 'get_time', arguments: '{}' },
    ]);
  });

  it('ends a streamed refusal as content_filter with the refusal as content, as unstreamed', async () => {
    const model = await streamOf([
      chunk({ role: 'assistant', content: null, refusal: '' }),
      chunk({ refusal: "I'm sorry, " }),
      chunk({ refusal: 'I cannot help with that.' }),
      chunk({}, 'stop'),
      USAGE,
      { data: '[DONE]' },
    ]);
    const deltas: string[] = [];
    const response = await model.generate(streaming(deltas));
    expect(response).toMatchObject({
      content: "I'm sorry, I cannot help with that.",
      finishReason: 'content_filter',
    });
    // A refusal is not the answer: nothing of it is streamed as text.
    expect(deltas).toEqual([]);
  });

  it('fails a streaming run on a refusal with provider.content_filter', async () => {
    const model = await streamOf([
      chunk({ role: 'assistant', content: null, refusal: '' }),
      chunk({ refusal: 'I cannot help with that.' }),
      chunk({}, 'stop'),
      { data: '[DONE]' },
    ]);
    const result = await agent({ model }).run('Hi', { onTextDelta: () => undefined });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.content_filter');
  });

  it('parses CRLF line endings, comments and events split across network chunks', async () => {
    server = await startHttpTestServer(async (_request, response) => {
      startSse(response);
      const text = ': keep-alive\r\n\r\ndata: {"choices":[{"index":0,"delta":{"content":"a"}}]}\r\n\r\n';
      response.write(text.slice(0, 30));
      response.write(text.slice(30));
      response.write('data: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"length"}]}\n\n');
      response.end('data: [DONE]\n\n');
    });
    const deltas: string[] = [];
    const response = await openaiCompatible({ baseUrl: server.url, model: 'm' }).generate(streaming(deltas));
    expect(deltas).toEqual(['a', 'b']);
    expect(response.content).toBe('ab');
    expect(response.finishReason).toBe('length');
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(response.model).toBe('m');
  });
});
