// keel runs on an AI SDK model: @ai-sdk/openai speaking to the simulated OpenAI-compatible server on 127.0.0.1, with
// its fault schedule. keel's retries are the only ones, so the report counts what the server received.
import { agent, constant, KeelError, type RunEvent } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAiSdk } from './index.js';
import {
  advanceThroughWaits,
  chatModel,
  requestsByModel,
  serverPool,
  weatherTool,
} from './test-support/simulated.js';

const servers = serverPool();
afterEach(servers.closeAll);

const QUESTION = 'What is the weather in Paris?';

describe('fromAiSdk over HTTP', () => {
  it('runs an agent with tools on an AI SDK model; the report counts what the server received', async () => {
    const server = await servers.start();
    const result = await agent({ model: fromAiSdk(chatModel(server)), tools: [weatherTool] }).run(QUESTION);
    expect(result.status).toBe('completed');
    expect(result.output).toContain('Sunny in Paris, 21°C');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2 });
    expect(result.report.requests).toEqual({ total: 2, byModel: { 'openai.chat/sim-primary': 2 } });
    expect(result.report.toolCalls.byTool).toEqual({ get_weather: 1 });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    // The tool result went back as the AI SDK's tool message, paired with the call.
    const second = server.requests[1]!.body as { messages: { role: string; tool_call_id?: string }[] };
    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('streams the answer through onTextDelta', async () => {
    const server = await servers.start();
    const deltas: string[] = [];
    const result = await agent({ model: fromAiSdk(chatModel(server)) }).run('Say hello', {
      onTextDelta: (delta) => deltas.push(delta),
    });
    expect(result.status).toBe('completed');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(result.output);
    expect(server.requests[0]!.stream).toBe(true);
  });

  it('absorbs a 429 with Retry-After, a 500 and a reset with keel retries alone, waiting what the server asked', async () => {
    const server = await servers.start({
      models: {
        'sim-primary': { faults: { retryAfterMs: 1_500, sequence: ['rate_limit', 'server_error', 'reset'] } },
      },
    });
    const clock = new FakeClock();
    const waits: number[] = [];
    const advance = advanceThroughWaits(clock);
    const result = await agent({
      model: fromAiSdk(chatModel(server)),
      tools: [weatherTool],
      clock,
      retry: { maxAttempts: 4, delay: constant(0) },
      onEvent: (event: RunEvent) => {
        if (event.type === 'retry-scheduled') waits.push(event.delayMs);
        advance(event);
      },
    }).run(QUESTION);
    expect(result.status).toBe('completed');
    expect(waits).toEqual([1_500, 0, 0]);
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 5 });
    expect(result.report.requests.total).toBe(5);
    expect(result.report.retries.model).toBe(3);
    // The reset comes after a 200's headers, half way through the body: a response cut off, as keel's own
    // providers classify it.
    expect(result.report.errors.byCode).toEqual({
      'provider.rate_limited': 1,
      'provider.server_error': 1,
      'provider.invalid_response': 1,
    });
  });

  it('turns cut-off and malformed JSON bodies into provider.invalid_response, retried', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['truncated_json', 'malformed_json'] } } },
    });
    const result = await agent({
      model: fromAiSdk(chatModel(server)),
      retry: { delay: constant(0) },
    }).run('Say hello');
    expect(result.status).toBe('completed');
    expect(result.report.errors.byCode).toEqual({ 'provider.invalid_response': 2 });
    expect(result.report.requests.total).toBe(3);
  });

  it('stacks no retry layer: 503 on every request with maxAttempts 3 reaches the server exactly 3 times', async () => {
    const server = await servers.start({ faults: { rates: { unavailable: 1 } } });
    const result = await agent({
      model: fromAiSdk(chatModel(server)),
      retry: { maxAttempts: 3, delay: constant(0) },
    }).run('Say hello');
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.overloaded');
    expect(result.error?.status).toBe(503);
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 3 });
    expect(result.report.requests.total).toBe(3);
  });

  it('falls back from one AI SDK model to another', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { rates: { server_error: 1 } } }, 'sim-fallback': {} },
    });
    const result = await agent({
      model: fromAiSdk(chatModel(server, 'sim-primary')),
      fallbacks: [fromAiSdk(chatModel(server, 'sim-fallback'))],
      tools: [weatherTool],
      retry: { maxAttempts: 2, delay: constant(0) },
    }).run(QUESTION);
    expect(result.status).toBe('completed');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 2, 'sim-fallback': 2 });
    expect(result.report.fallbacks.used).toEqual([
      {
        step: 1,
        from: 'openai.chat/sim-primary',
        to: 'openai.chat/sim-fallback',
        errorCode: 'provider.server_error',
      },
    ]);
  });

  it('asks for structured output as response_format json_schema and validates the answer', async () => {
    const server = await servers.start();
    const result = await agent({
      model: fromAiSdk(chatModel(server)),
      outputSchema: {
        type: 'object',
        properties: { city: { type: 'string' }, celsius: { type: 'number' } },
        required: ['city', 'celsius'],
        additionalProperties: false,
      },
    }).run('Weather in Rome as JSON');
    expect(result.status).toBe('completed');
    expect(result.output).toMatchObject({ city: expect.any(String), celsius: expect.any(Number) });
    expect(server.requests[0]!.body).toMatchObject({ response_format: { type: 'json_schema' } });
  });

  it('passes the tool choice and reports an answer cut at the token limit as finish reason length', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['none', 'max_tokens'] } } },
    });
    const model = fromAiSdk(chatModel(server));
    const tools = [weatherTool].map((entry) => ({
      name: entry.name,
      description: entry.description,
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }));
    const forced = await model.generate({
      messages: [{ role: 'user', content: QUESTION }],
      tools,
      toolChoice: { name: 'get_weather' },
      signal: new AbortController().signal,
    });
    expect(server.requests[0]!.body).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(forced).toMatchObject({ finishReason: 'tool_calls', toolCalls: [{ name: 'get_weather' }] });
    const cut = await model.generate({
      messages: [{ role: 'user', content: 'Tell me a long story' }],
      signal: new AbortController().signal,
    });
    expect(cut.finishReason).toBe('length');
  });

  it('a cancelled run aborts the request in flight', async () => {
    const controller = new AbortController();
    const server = await servers.start({
      faults: { sequence: ['hang'] },
      onRequest: () => controller.abort(),
    });
    const result = await agent({ model: fromAiSdk(chatModel(server)) }).run('Say hello', {
      signal: controller.signal,
    });
    expect(result.status).toBe('cancelled');
    expect(result.error?.code).toBe('run.cancelled');
    expect(requestsByModel(server)).toEqual({ 'sim-primary': 1 });
  });

  it('refuses what is not an AI SDK 6 language model, and unknown options, with config.invalid', () => {
    const thrown = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        if (KeelError.isInstance(error)) return error;
      }
      throw new Error('expected a KeelError');
    };
    expect(thrown(() => fromAiSdk('openai/gpt-4.1-mini' as never)).message).toMatch(
      /got the model id "openai\/gpt-4.1-mini"; pass a model object such as createOpenAI\(\{ apiKey \}\)\.chat/,
    );
    expect(
      thrown(() => fromAiSdk({ specificationVersion: 'v2', provider: 'p', modelId: 'm' } as never)).message,
    ).toMatch(/specification "v2", not v3: use a provider package made for ai 6/);
    const model = {
      specificationVersion: 'v3',
      provider: 'p',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error('unused')),
      doStream: () => Promise.reject(new Error('unused')),
    } as const;
    expect(thrown(() => fromAiSdk(model, { maxRetries: 0 } as never)).message).toMatch(
      /Unknown fromAiSdk\(\) option maxRetries/,
    );
    expect(thrown(() => fromAiSdk(model, { contextWindowTokens: -1 })).message).toMatch(
      /contextWindowTokens must be a positive integer/,
    );
    expect(thrown(() => fromAiSdk(model, { secrets: 'sk-key' as never }))).toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(/secrets must be an array of strings, such as \[apiKey\]/),
    });
    expect(fromAiSdk(model, { provider: 'mine', contextWindowTokens: 8_000 })).toMatchObject({
      provider: 'mine',
      model: 'm',
      contextWindowTokens: 8_000,
    });
  });
});
