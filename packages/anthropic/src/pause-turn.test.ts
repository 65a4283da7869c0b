// `stop_reason: pause_turn`: the paused turn goes back as it came and the answer goes on, a bounded number of times,
// each continuation counted as the upstream request it is.
import { agent, KeelError, type ModelRequest } from '@keel/core';
import {
  type HttpTestServer,
  type ServerSentEvent,
  sendJson,
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

const SEARCH = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'keel' } };
const RESULTS = {
  type: 'web_search_tool_result',
  tool_use_id: 'srvtoolu_1',
  content: [
    { type: 'web_search_result', url: 'https://example.com', title: 'Keel', encrypted_content: 'Zm9v' },
  ],
};

function message(content: unknown[], stopReason: string, outputTokens = 10) {
  return {
    type: 'message',
    role: 'assistant',
    model: 'claude-pause',
    content,
    stop_reason: stopReason,
    usage: { input_tokens: 100, output_tokens: outputTokens },
  };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'Search for keel' }],
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function serve(...bodies: unknown[]) {
  server = await startHttpTestServer((recorded, response) =>
    sendJson(response, 200, bodies[Math.min(recorded.index, bodies.length) - 1]),
  );
  return server;
}

describe('anthropic pause_turn', () => {
  it('sends the paused turn back as it came and joins the continuation into one answer', async () => {
    const paused = [SEARCH, RESULTS, { type: 'text', text: 'Keel is ' }];
    const { url, requests } = await serve(
      message(paused, 'pause_turn', 30),
      message([{ type: 'text', text: 'a runtime.' }], 'end_turn', 5),
    );
    const model = anthropic('claude-pause', { apiKey: 'k', baseUrl: url });
    let continuations = 0;
    const response = await model.generate(request({ onContinuationRequest: () => continuations++ }));
    expect(requests).toHaveLength(2);
    expect(continuations).toBe(1);
    const [first, second] = requests.map((recorded) => recorded.json() as { messages: unknown[] });
    expect(second!.messages).toEqual([...first!.messages, { role: 'assistant', content: paused }]);
    expect(response.content).toBe('Keel is a runtime.');
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({ inputTokens: 200, outputTokens: 35 });
  });

  it('rebuilds a streamed paused turn as the API would have sent it unstreamed, and streams on', async () => {
    const event = (type: string, data: Record<string, unknown> = {}): ServerSentEvent => ({
      event: type,
      data: { type, ...data },
    });
    const start = event('message_start', {
      message: { model: 'claude-pause', content: [], usage: { input_tokens: 50, output_tokens: 1 } },
    });
    server = await startHttpTestServer((recorded, response) => {
      startSse(response);
      if (recorded.index === 1) {
        writeSse(response, [
          start,
          event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
          event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Search.' } }),
          event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } }),
          event('content_block_start', { index: 1, content_block: { ...SEARCH, input: {} } }),
          event('content_block_delta', {
            index: 1,
            delta: { type: 'input_json_delta', partial_json: '{"query":' },
          }),
          event('content_block_delta', {
            index: 1,
            delta: { type: 'input_json_delta', partial_json: '"keel"}' },
          }),
          event('content_block_start', { index: 2, content_block: RESULTS }),
          event('content_block_start', { index: 3, content_block: { type: 'text', text: '' } }),
          event('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'Keel ' } }),
          event('content_block_delta', {
            index: 3,
            delta: { type: 'citations_delta', citation: { type: 'web_search_result_location', url: 'u' } },
          }),
          event('message_delta', { delta: { stop_reason: 'pause_turn' }, usage: { output_tokens: 20 } }),
          event('message_stop'),
        ]);
      } else {
        writeSse(response, [
          start,
          event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'runs agents.' } }),
          event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4 } }),
          event('message_stop'),
        ]);
      }
      response.end();
    });
    const model = anthropic('claude-pause', {
      apiKey: 'k',
      baseUrl: server.url,
      maxOutputTokens: 4000,
      thinking: { budgetTokens: 1024 },
    });
    const deltas: string[] = [];
    const response = await model.generate(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['Keel ', 'runs agents.']);
    const second = server.requests[1]!.json() as { messages: { role: string; content: unknown }[] };
    expect(second.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Search.', signature: 'sig-1' },
        SEARCH,
        RESULTS,
        { type: 'text', text: 'Keel ', citations: [{ type: 'web_search_result_location', url: 'u' }] },
      ],
    });
    expect(response.content).toBe('Keel runs agents.');
    expect(response.reasoning).toEqual([{ type: 'thinking', text: 'Search.', signature: 'sig-1' }]);
  });

  it('stops after maxPauseContinuations with provider.max_tokens and the text so far', async () => {
    const { url, requests } = await serve(message([{ type: 'text', text: 'Still ' }], 'pause_turn'));
    const model = anthropic('claude-pause', { apiKey: 'k', baseUrl: url, maxPauseContinuations: 1 });
    const error = await model.generate(request()).catch((thrown: unknown) => thrown);
    expect(KeelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'provider.max_tokens',
      retryable: false,
      message: 'anthropic: claude-pause paused its turn again (stop_reason pause_turn) after 1 continuation',
      data: { stopReason: 'pause_turn', continuations: 1, partialOutput: 'Still Still ' },
    });
    expect(requests).toHaveLength(2);

    const never = anthropic('claude-pause', { apiKey: 'k', baseUrl: url, maxPauseContinuations: 0 });
    await expect(never.generate(request())).rejects.toMatchObject({ data: { continuations: 0 } });
    expect(requests).toHaveLength(3);
    expect(() => anthropic('m', { apiKey: 'k', maxPauseContinuations: -1 })).toThrow(
      /maxPauseContinuations must be an integer of at least 0, got -1/,
    );
  });

  it("a run's report counts every continuation as a request to the model", async () => {
    const { url, requests } = await serve(
      message([SEARCH, RESULTS], 'pause_turn'),
      message([{ type: 'text', text: 'Found ' }], 'pause_turn'),
      message([{ type: 'text', text: 'it.' }], 'end_turn'),
    );
    const result = await agent({ model: anthropic('claude-pause', { apiKey: 'k', baseUrl: url }) }).run(
      'Search',
    );
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Found it.');
    expect(requests).toHaveLength(3);
    expect(result.report.steps).toBe(1);
    expect(result.report.requests).toEqual({ total: 3, byModel: { 'anthropic/claude-pause': 3 } });
  });
});
