// The simulated server's Responses API wire (`/v1/responses`): the same brain and faults as its Chat Completions
// wire, reasoning items that must come back, and background streams that resume. Runs go through keel's
// `openaiResponses` provider over real HTTP on 127.0.0.1.
import { agent, constant, type RunEvent } from '@keel/core';
import { openaiResponses } from '@keel/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { serverPool, weatherTool } from './agent-http-fixture.js';
import { simulated } from './provider.js';

const servers = serverPool();
afterEach(servers.closeAll);

describe('simulated server: the Responses API wire', () => {
  it('runs a tool-using agent with reasoning items sent back, through a reset body and a server error', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { retryAfterMs: 0, sequence: ['reset', 'none', 'server_error'] } } },
    });
    const model = simulated({ server, api: 'responses' });
    const events: RunEvent[] = [];
    const result = await agent({ model, tools: [weatherTool], retry: { delay: constant(0) } }).run(
      'What is the weather in Paris?',
      { onEvent: (event) => events.push(event) },
    );
    expect(result.status).toBe('completed');
    expect(result.output).toContain('Paris');
    expect(server.requests.map((request) => `${request.path} ${request.fault}`)).toEqual([
      '/v1/responses reset',
      '/v1/responses none',
      '/v1/responses server_error',
      '/v1/responses none',
    ]);
    // The tool call's reasoning item came back with it (the server refuses a function call without one).
    const last = server.requests.at(-1)!.body as { input: { type?: string }[]; store: boolean };
    expect(last.store).toBe(false);
    expect(last.input.map((item) => item.type ?? 'message')).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect(result.usage.reasoningTokens).toBeGreaterThan(0);
    expect(result.report.retries.model).toBe(2);
  });

  it('refuses a function call sent back without its reasoning item, as the real API does (400)', async () => {
    const server = await servers.start();
    const response = await fetch(`${server.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-primary',
        store: false,
        reasoning: { effort: 'low' },
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "without its required 'reasoning' item",
    );
  });

  it('in background mode, a streamed answer cut by a reset is resumed from the last event, no delta twice', async () => {
    const server = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['none', 'reset'] } } },
    });
    const model = openaiResponses('sim-primary', { baseUrl: server.url, apiKey: 'k', background: true });
    const deltas: string[] = [];
    const result = await agent({ model, tools: [weatherTool] }).run('What is the weather in Paris?', {
      onTextDelta: (delta) => deltas.push(delta),
    });
    expect(result.status).toBe('completed');
    expect(deltas.join('')).toBe(result.output);
    expect(server.requests.map((request) => `${request.method} ${request.path} ${request.fault}`)).toEqual([
      'POST /v1/responses none',
      'POST /v1/responses reset',
      expect.stringMatching(/^GET \/v1\/responses\/resp_sim_1 /),
    ]);
    expect(result.report.retries.total).toBe(0);
  });

  it('without background mode, a cut stream fails with provider.invalid_response, as a cut chat stream does', async () => {
    const server = await servers.start({ models: { 'sim-primary': { faults: { sequence: ['reset'] } } } });
    const model = openaiResponses('sim-primary', { baseUrl: server.url, apiKey: 'k' });
    const failure = await model
      .generate({
        messages: [{ role: 'user', content: 'Tell me a long story about ships' }],
        signal: new AbortController().signal,
        onTextDelta: () => undefined,
      })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });
});
