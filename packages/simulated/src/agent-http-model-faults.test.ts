// The run loop against the simulated server over real HTTP, for the faults that are in the model's answer rather than
// in the transport: broken tool calls (corrected, not retried), a context overflow (reduced, or failed when nothing
// can be removed) and an answer cut at the output token limit (failed hard, with the partial output).

import { agent, constant } from '@keel/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appliedFaults,
  reportCounts,
  serverPool,
  serverRequests,
  weatherTool,
} from './agent-http-fixture.js';
import { simulated } from './provider.js';

const servers = serverPool();
afterEach(servers.closeAll);

const QUESTION = 'What is the weather in Paris?';

describe('run loop over HTTP: faults in the answer', () => {
  it('invalid_tool_arguments: the parse error goes back to the model, which corrects the call', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['invalid_tool_arguments'] } } },
    });
    const result = await agent({ model: simulated({ server: running }), tools: [weatherTool] }).run(QUESTION);

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('final_answer');
    expect(result.output).toContain('Sunny in Paris, 21°C');
    expect(reportCounts(result.report)).toEqual({
      steps: 3,
      requests: { total: 3, byModel: { 'simulated/sim-primary': 3 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: { malformed_json: 1 },
      contextReductions: 0,
      toolCalls: { get_weather: 1 },
      errors: { 'tool.invalid_input': 1 },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ invalid_tool_arguments: 1, none: 2 });
  });

  it('unknown_tool: the model is told the available tools and calls the right one', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['unknown_tool'] } } },
    });
    const result = await agent({ model: simulated({ server: running }), tools: [weatherTool] }).run(QUESTION);

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('final_answer');
    expect(result.output).toContain('Sunny in Paris, 21°C');
    expect(reportCounts(result.report)).toEqual({
      steps: 3,
      requests: { total: 3, byModel: { 'simulated/sim-primary': 3 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: { unknown_tool: 1 },
      contextReductions: 0,
      toolCalls: { get_weather: 1 },
      errors: { 'tool.not_found': 1 },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ unknown_tool: 1, none: 2 });
    const guidance = result.messages.find((message) => message.role === 'tool')?.content ?? '';
    expect(guidance).toContain('get_weather');
  });

  it('context_overflow on a one-message conversation fails: nothing can be removed', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['context_overflow'] } } },
    });
    const result = await agent({ model: simulated({ server: running }), tools: [weatherTool] }).run(QUESTION);

    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('model_error');
    expect(result.error?.code).toBe('provider.context_overflow');
    expect(reportCounts(result.report)).toEqual({
      steps: 1,
      requests: { total: 1, byModel: { 'simulated/sim-primary': 1 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: {},
      contextReductions: 0,
      toolCalls: {},
      errors: { 'provider.context_overflow': 1 },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ context_overflow: 1 });
    expect(running.requests[0]?.status).toBe(400);
  });

  it('context_overflow on a longer conversation: the sliding window drops old turns and the run goes on', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['context_overflow'] } } },
    });
    const result = await agent({ model: simulated({ server: running }), retry: { delay: constant(0) } }).run([
      { role: 'user', content: 'Remember the number 7.' },
      { role: 'assistant', content: 'Noted: 7.' },
      { role: 'user', content: 'And the colour blue.' },
      { role: 'assistant', content: 'Noted: blue.' },
      { role: 'user', content: 'Say hello.' },
    ]);

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('final_answer');
    expect(reportCounts(result.report)).toEqual({
      steps: 1,
      requests: { total: 2, byModel: { 'simulated/sim-primary': 2 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: {},
      contextReductions: 1,
      toolCalls: {},
      errors: { 'provider.context_overflow': 1 },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ context_overflow: 1, none: 1 });
    const sent = running.requests.map(
      (record) => (record.body as { messages: { role: string; content: string }[] }).messages,
    );
    // The retry after the reduction sent fewer messages, the latest question still last.
    expect(sent[0]).toHaveLength(5);
    expect(sent[1]!.length).toBeLessThan(5);
    expect(sent[1]!.at(-1)).toEqual({ role: 'user', content: 'Say hello.' });
  });

  it('max_tokens fails hard with provider.max_tokens carrying the partial output', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['max_tokens'] } } },
    });
    const result = await agent({ model: simulated({ server: running }), tools: [weatherTool] }).run(QUESTION);

    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('max_tokens');
    expect(result.error?.code).toBe('provider.max_tokens');
    // The simulated model's filler text, cut at a word near its middle: what the server sent before `length`.
    expect(result.error?.data.partialOutput).toBe('Let me work through this request step by');
    expect(reportCounts(result.report)).toEqual({
      steps: 1,
      requests: { total: 1, byModel: { 'simulated/sim-primary': 1 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: {},
      contextReductions: 0,
      toolCalls: {},
      errors: { 'provider.max_tokens': 1 },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ max_tokens: 1 });
  });
});
