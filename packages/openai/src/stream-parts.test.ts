// The parts of a Chat Completions stream besides its text (ModelRequest.onStreamPart), and agent.stream() over the
// wire: a real local HTTP server speaking the OpenAI stream format.
import { agent, type ModelRequest, type StreamPart, tool } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
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

const TOOL_ANSWER: ServerSentEvent[] = [
  chunk({ role: 'assistant', content: null }),
  chunk({ reasoning_content: 'The user wants ' }),
  chunk({ reasoning_content: 'the weather.' }),
  chunk({
    tool_calls: [
      { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({}, 'tool_calls'),
  { data: '[DONE]' },
];

const TEXT_ANSWER: ServerSentEvent[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Sunny' }),
  chunk({ content: ' in Paris.' }),
  chunk({}, 'stop'),
  { data: '[DONE]' },
];

/** Answers the first request with `first` and every later one with `then`. */
async function serve(first: ServerSentEvent[], then: ServerSentEvent[] = TEXT_ANSWER) {
  server = await startHttpTestServer((_request, response) => {
    startSse(response);
    writeSse(response, server!.requests.length <= 1 ? first : then);
    response.end();
  });
  return openaiCompatible({ baseUrl: server.url, model: 'm' });
}

describe('openai stream parts', () => {
  it('gives reasoning deltas and each tool call’s start, argument pieces and end to onStreamPart', async () => {
    const model = await serve(TOOL_ANSWER);
    const parts: ModelStreamPart[] = [];
    const request: ModelRequest = {
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      signal: new AbortController().signal,
      onTextDelta: () => undefined,
      onStreamPart: (part) => parts.push(part),
    };

    const response = await model.generate(request);

    expect(parts).toEqual([
      { type: 'reasoning-delta', delta: 'The user wants ' },
      { type: 'reasoning-delta', delta: 'the weather.' },
      { type: 'tool-call-start', index: 0, toolCallId: 'call_a', toolName: 'get_weather' },
      { type: 'tool-call-delta', index: 0, toolCallId: 'call_a', delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, toolCallId: 'call_a', delta: '"Paris"}' },
      {
        type: 'tool-call-end',
        index: 0,
        toolCallId: 'call_a',
        toolName: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
    ]);
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
  });

  it('never ends a tool call whose stream was cut inside its arguments', async () => {
    const model = await serve(TOOL_ANSWER.slice(0, 5));
    const parts: ModelStreamPart[] = [];
    await expect(
      model.generate({
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        signal: new AbortController().signal,
        onTextDelta: () => undefined,
        onStreamPart: (part) => parts.push(part),
      }),
    ).rejects.toMatchObject({ code: 'provider.invalid_response' });
    expect(parts.map((part) => part.type)).toEqual([
      'reasoning-delta',
      'reasoning-delta',
      'tool-call-start',
      'tool-call-delta',
    ]);
  });

  it('streams a whole run through agent.stream(): tool call parts, the tool result, text equal to the output', async () => {
    const model = await serve(TOOL_ANSWER);
    const cities: string[] = [];
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: ({ city }: { city: string }) => {
        cities.push(city);
        return { city, sky: 'sunny' };
      },
    });
    const assistant = agent({ model, tools: [weather] });

    const stream = assistant.stream('Weather in Paris?');
    const parts: StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const result = await stream.result;

    expect(result.status).toBe('completed');
    expect(cities).toEqual(['Paris']);
    expect(parts.map((part) => part.type)).toEqual([
      'step-start',
      'reasoning-delta',
      'reasoning-delta',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-delta',
      'tool-call-end',
      'tool-result',
      'step-end',
      'step-start',
      'text-delta',
      'text-delta',
      'finish',
    ]);
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
    expect(text).toBe(result.output);
    expect(text).toBe('Sunny in Paris.');
  });
});
