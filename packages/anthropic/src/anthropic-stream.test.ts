// What only the Messages stream does. Cut-off and broken streams, aborts and a server that ignores stream: true are
// the ModelProvider contract's (contract.test.ts).
import { KeelError, type ModelRequest } from '@keel/core';
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
const textStart = (index: number) =>
  event('content_block_start', { index, content_block: { type: 'text', text: '' } });
const textDelta = (index: number, text: string) =>
  event('content_block_delta', { index, delta: { type: 'text_delta', text } });
const toolStart = (index: number, id: string, name: string) =>
  event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
const jsonDelta = (index: number, partial: string) =>
  event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } });
const blockStop = (index: number) => event('content_block_stop', { index });
const end = (stopReason: string, outputTokens = 12) => [
  event('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  }),
  event('message_stop'),
];

async function streamOf(events: ServerSentEvent[]) {
  server = await startHttpTestServer((_request, response) => {
    startSse(response);
    writeSse(response, events);
    response.end();
  });
  return anthropic('claude-test', { apiKey: 'k', baseUrl: server.url });
}

function streaming(deltas: string[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'Hi' }],
    signal: new AbortController().signal,
    onTextDelta: (delta) => deltas.push(delta),
    ...overrides,
  };
}

describe('anthropic streaming', () => {
  it('streams text deltas and assembles the answer, usage and stop reason', async () => {
    const model = await streamOf([
      START,
      textStart(0),
      event('ping'),
      textDelta(0, 'Hel'),
      textDelta(0, 'lo'),
      blockStop(0),
      ...end('end_turn'),
    ]);
    const deltas: string[] = [];
    const response = await model.generate(streaming(deltas));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(response).toEqual({
      content: 'Hello',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 30, outputTokens: 12 },
      model: 'claude-stream',
    });
    expect((server!.requests[0]!.json() as Record<string, unknown>).stream).toBe(true);
    expect(server!.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('joins parallel tool inputs from input_json_delta pieces', async () => {
    const model = await streamOf([
      START,
      textStart(0),
      textDelta(0, 'Checking.'),
      blockStop(0),
      toolStart(1, 'toolu_a', 'get_weather'),
      jsonDelta(1, ''),
      jsonDelta(1, '{"city": "Pa'),
      jsonDelta(1, 'ris"}'),
      blockStop(1),
      toolStart(2, 'toolu_b', 'get_time'),
      blockStop(2),
      ...end('tool_use'),
    ]);
    const deltas: string[] = [];
    const response = await model.generate(streaming(deltas));
    expect(deltas).toEqual(['Checking.']);
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls).toEqual([
      { id: 'toolu_a', name: 'get_weather', arguments: '{"city": "Paris"}' },
      { id: 'toolu_b', name: 'get_time', arguments: '{}' },
    ]);
  });

  it('streams the structured-output tool JSON as text', async () => {
    const model = await streamOf([
      START,
      toolStart(0, 'toolu_o', 'answer'),
      jsonDelta(0, '{"city":'),
      jsonDelta(0, '"Paris"}'),
      blockStop(0),
      ...end('tool_use'),
    ]);
    const deltas: string[] = [];
    const response = await model.generate(
      streaming(deltas, { outputSchema: { name: 'answer', schema: { type: 'object' } } }),
    );
    expect(deltas).toEqual(['{"city":', '"Paris"}']);
    expect(response).toMatchObject({ content: '{"city":"Paris"}', toolCalls: [], finishReason: 'stop' });
  });

  it('maps max_tokens to length and keeps the partial text', async () => {
    const model = await streamOf([START, textStart(0), textDelta(0, 'cut'), ...end('max_tokens', 4096)]);
    const response = await model.generate(streaming([]));
    expect(response).toMatchObject({ content: 'cut', finishReason: 'length', usage: { outputTokens: 4096 } });
  });

  it('fails a stream ending with model_context_window_exceeded as provider.context_overflow', async () => {
    const model = await streamOf([
      START,
      textStart(0),
      textDelta(0, 'cut'),
      ...end('model_context_window_exceeded'),
    ]);
    const error = await model.generate(streaming([])).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'provider.context_overflow',
      data: { stopReason: 'model_context_window_exceeded', partialOutput: 'cut' },
    });
  });

  it('classifies an error event mid-stream (overloaded)', async () => {
    const model = await streamOf([
      START,
      textStart(0),
      textDelta(0, 'Hel'),
      event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ]);
    const deltas: string[] = [];
    const error = await model.generate(streaming(deltas)).catch((caught: unknown) => caught);
    expect(deltas).toEqual(['Hel']);
    expect(KeelError.isInstance(error) && error.code).toBe('provider.overloaded');
    expect((error as KeelError).provider).toBe('anthropic');
    expect((error as KeelError).retryable).toBe(true);
  });

  it('turns a delta without its block into provider.invalid_response', async () => {
    const model = await streamOf([START, textDelta(3, 'orphan'), ...end('end_turn')]);
    const error = await model.generate(streaming([])).catch((caught: unknown) => caught);
    expect(KeelError.isInstance(error) && error.code).toBe('provider.invalid_response');
  });
});
