// Reasoning models over the Chat Completions wire: `reasoning_effort` out, reasoning tokens in, through a whole run.
import { agent, KeelError, type ModelRequest, tool } from '@keel/core';
import { type HttpTestServer, sendJson, startHttpTestServer, startSse, writeSse } from '@keel/core/testing';
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

function completion(message: Record<string, unknown>, usage: Record<string, unknown>, finishReason = 'stop') {
  return {
    id: 'chatcmpl-1',
    model: 'o4-mini-2025',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage,
  };
}

function thrownBy(make: () => unknown): KeelError {
  try {
    make();
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a throw');
}

describe('openai reasoning', () => {
  it('sends reasoning_effort and reads reasoning tokens from completion_tokens_details', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(
        response,
        200,
        completion(
          { content: '42' },
          { prompt_tokens: 10, completion_tokens: 300, completion_tokens_details: { reasoning_tokens: 256 } },
        ),
      ),
    );
    const model = openai('o4-mini', { apiKey: 'k', baseUrl: server.url, reasoningEffort: 'high' });
    const response = await model.generate(request());
    expect(server.requests[0]!.json()).toMatchObject({ model: 'o4-mini', reasoning_effort: 'high' });
    expect(response.usage).toEqual({ inputTokens: 10, outputTokens: 300, reasoningTokens: 256 });
  });

  it('reads cached input tokens from prompt_tokens_details, streamed or not', async () => {
    const usage = {
      prompt_tokens: 2_000,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 1_536 },
    };
    server = await startHttpTestServer((recorded, response) => {
      if ((recorded.json() as { stream?: boolean }).stream !== true) {
        sendJson(response, 200, completion({ content: 'ok' }, usage));
        return;
      }
      startSse(response);
      writeSse(response, [
        { data: { model: 'gpt-test', choices: [{ index: 0, delta: { content: 'ok' } }] } },
        { data: { model: 'gpt-test', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        { data: { model: 'gpt-test', choices: [], usage } },
        { data: '[DONE]' },
      ]);
      response.end();
    });
    const model = openai('gpt-test', { apiKey: 'k', baseUrl: server.url });
    const expected = { inputTokens: 2_000, outputTokens: 5, cachedInputTokens: 1_536 };
    expect((await model.generate(request())).usage).toEqual(expected);
    expect((await model.generate(request({ onTextDelta: () => {} }))).usage).toEqual(expected);
  });

  it('sends no reasoning_effort unless asked, and leaves reasoningTokens out when the server does not count them', async () => {
    server = await startHttpTestServer((_request, response) =>
      sendJson(response, 200, completion({ content: 'ok' }, { prompt_tokens: 3, completion_tokens: 1 })),
    );
    const model = openaiCompatible({ baseUrl: server.url, model: 'llama' });
    const response = await model.generate(request());
    expect(server.requests[0]!.json()).not.toHaveProperty('reasoning_effort');
    expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 1 });
  });

  it('reads reasoning tokens from the usage chunk of a stream', async () => {
    server = await startHttpTestServer((_request, response) => {
      startSse(response);
      writeSse(response, [
        {
          data: { model: 'o4-mini', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
        },
        { data: { model: 'o4-mini', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        {
          data: {
            model: 'o4-mini',
            choices: [],
            usage: {
              prompt_tokens: 5,
              completion_tokens: 70,
              completion_tokens_details: { reasoning_tokens: 64 },
            },
          },
        },
        { data: '[DONE]' },
      ]);
      response.end();
    });
    const model = openaiCompatible({ baseUrl: server.url, model: 'o4-mini', reasoningEffort: 'minimal' });
    const deltas: string[] = [];
    const response = await model.generate(request({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(server.requests[0]!.json()).toMatchObject({ reasoning_effort: 'minimal', stream: true });
    expect(deltas).toEqual(['Hi']);
    expect(response.usage).toEqual({ inputTokens: 5, outputTokens: 70, reasoningTokens: 64 });
  });

  it('refuses an unknown reasoning effort with the values it takes', () => {
    const error = thrownBy(() => openai('o4-mini', { apiKey: 'k', reasoningEffort: 'max' as never }));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toBe(
      'openai: reasoningEffort must be one of "minimal", "low", "medium", "high", got "max"',
    );
    expect(() =>
      openaiCompatible({ baseUrl: 'http://127.0.0.1:1', model: 'm', reasoningEffort: 3 as never }),
    ).toThrow(/reasoningEffort must be one of/);
  });

  it("a run's report sums the reasoning tokens of its steps, and thinking blocks never reach this wire", async () => {
    server = await startHttpTestServer((recorded, response) => {
      if (recorded.index === 1) {
        sendJson(
          response,
          200,
          completion(
            {
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
              ],
            },
            { prompt_tokens: 20, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: 40 } },
            'tool_calls',
          ),
        );
        return;
      }
      sendJson(
        response,
        200,
        completion(
          { content: 'found' },
          { prompt_tokens: 30, completion_tokens: 12, completion_tokens_details: { reasoning_tokens: 8 } },
        ),
      );
    });
    const lookup = tool({
      name: 'lookup',
      description: 'Looks up',
      input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      execute: () => 'x is 1',
    });
    const assistant = agent({
      model: openai('o4-mini', { apiKey: 'k', baseUrl: server.url, reasoningEffort: 'low' }),
      tools: [lookup],
    });
    const result = await assistant.run([
      { role: 'user', content: 'Earlier question' },
      {
        role: 'assistant',
        content: 'Earlier answer',
        reasoning: [{ type: 'thinking', text: 'private', signature: 'sig' }],
      },
      { role: 'user', content: 'Find x' },
    ]);
    expect(result.status).toBe('completed');
    expect(result.report.usage).toEqual({ inputTokens: 50, outputTokens: 62, reasoningTokens: 48 });
    expect(server.requests.map((recorded) => recorded.body).join('\n')).not.toMatch(/private|sig|reasoning"/);
  });
});
