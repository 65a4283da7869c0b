// The parts of a Messages stream besides its text (ModelRequest.onStreamPart), and agent.stream() over the wire: a
// real local HTTP server speaking the Anthropic stream format.
import { agent, type StreamPart, tool } from '@keel/core';
import type { ModelStreamPart } from '@keel/core/adapter';
import {
  type HttpTestServer,
  type ServerSentEvent,
  startHttpTestServer,
  startSse,
  writeSse,
} from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropic } from './index.js';

let server: HttpTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const event = (type: string, data: Record<string, unknown> = {}): ServerSentEvent => ({
  event: type,
  data: { type, ...data },
});
const START = event('message_start', {
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-stream',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 30, output_tokens: 1 },
  },
});
const blockStart = (index: number, block: Record<string, unknown>) =>
  event('content_block_start', { index, content_block: block });
const blockDelta = (index: number, delta: Record<string, unknown>) =>
  event('content_block_delta', { index, delta });
const blockStop = (index: number) => event('content_block_stop', { index });
const end = (stopReason: string) => [
  event('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 12 },
  }),
  event('message_stop'),
];

const TOOL_ANSWER: ServerSentEvent[] = [
  START,
  blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
  blockDelta(0, { type: 'thinking_delta', thinking: 'Weather, ' }),
  blockDelta(0, { type: 'thinking_delta', thinking: 'so the tool.' }),
  blockDelta(0, { type: 'signature_delta', signature: 'sig' }),
  blockStop(0),
  blockStart(1, { type: 'text', text: '' }),
  blockDelta(1, { type: 'text_delta', text: 'Let me look.' }),
  blockStop(1),
  blockStart(2, { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} }),
  blockDelta(2, { type: 'input_json_delta', partial_json: '{"city":' }),
  blockDelta(2, { type: 'input_json_delta', partial_json: '"Paris"}' }),
  blockStop(2),
  ...end('tool_use'),
];
const TEXT_ANSWER: ServerSentEvent[] = [
  START,
  blockStart(0, { type: 'text', text: '' }),
  blockDelta(0, { type: 'text_delta', text: 'Sunny' }),
  blockDelta(0, { type: 'text_delta', text: ' in Paris.' }),
  blockStop(0),
  ...end('end_turn'),
];

async function serve(first: ServerSentEvent[], then: ServerSentEvent[] = TEXT_ANSWER) {
  server = await startHttpTestServer((_request, response) => {
    startSse(response);
    writeSse(response, server!.requests.length <= 1 ? first : then);
    response.end();
  });
  return anthropic('claude-test', { apiKey: 'k', baseUrl: server.url });
}

describe('anthropic stream parts', () => {
  it('gives thinking deltas and each tool call’s start, input pieces and end to onStreamPart', async () => {
    const model = await serve(TOOL_ANSWER);
    const parts: ModelStreamPart[] = [];
    const texts: string[] = [];
    const response = await model.generate({
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      signal: new AbortController().signal,
      onTextDelta: (delta) => texts.push(delta),
      onStreamPart: (part) => parts.push(part),
    });

    expect(texts).toEqual(['Let me look.']);
    expect(parts).toEqual([
      { type: 'reasoning-delta', delta: 'Weather, ' },
      { type: 'reasoning-delta', delta: 'so the tool.' },
      { type: 'tool-call-start', index: 0, toolCallId: 'toolu_a', toolName: 'get_weather' },
      { type: 'tool-call-delta', index: 0, toolCallId: 'toolu_a', delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, toolCallId: 'toolu_a', delta: '"Paris"}' },
      {
        type: 'tool-call-end',
        index: 0,
        toolCallId: 'toolu_a',
        toolName: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
    ]);
    expect(response.toolCalls).toMatchObject([{ id: 'toolu_a', name: 'get_weather' }]);
  });

  it('streams a whole run through agent.stream(): parts in order, text equal to the output', async () => {
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
    const stream = agent({ model, tools: [weather] }).stream('Weather in Paris?');
    const parts: StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const result = await stream.result;

    expect(result.status).toBe('completed');
    expect(cities).toEqual(['Paris']);
    expect(parts.map((part) => part.type)).toEqual([
      'step-start',
      'reasoning-delta',
      'reasoning-delta',
      'text-delta',
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
    const finalStep = parts.at(-2)!.type === 'text-delta' ? 2 : -1;
    const text = parts
      .flatMap((part) => (part.type === 'text-delta' && part.step === finalStep ? [part.delta] : []))
      .join('');
    expect(text).toBe(result.output);
  });
});
