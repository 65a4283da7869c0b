// The run loop against the simulated provider over real HTTP on 127.0.0.1: every fault travels the wire path a
// hosted model's would (status codes, headers, broken bodies), and the server's own count of what it received is
// checked against the run's report.

import { agent, constant, type RunEvent } from '@keel/core';
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

describe('run loop over HTTP (simulated provider)', () => {
  it('retries, corrects and falls back, and reports exactly the requests the server received', async () => {
    const running = await servers.start({
      models: {
        'sim-primary': {
          faults: {
            retryAfterMs: 0,
            sequence: ['rate_limit', 'invalid_tool_arguments', 'none', 'overloaded', 'server_error', 'reset'],
          },
        },
        'sim-fallback': { faults: {} },
      },
    });
    const primary = simulated({ server: running });
    const backup = primary.withModel('sim-fallback');
    const events: RunEvent[] = [];
    const assistant = agent({
      model: primary,
      fallbacks: [backup],
      tools: [weatherTool],
      retry: { delay: constant(0) },
    });

    const result = await assistant.run('What is the weather in Paris?', {
      onEvent: (event) => events.push(event),
    });

    expect(result.status).toBe('completed');
    expect(result.stopReason).toBe('final_answer');
    expect(result.output).toContain('Sunny in Paris, 21°C');
    // Primary: 429 (retried), broken arguments (corrected), the tool call, then 529, 500 and a reset: three attempts,
    // so the loop falls back, and the fallback answers.
    expect(reportCounts(result.report)).toEqual({
      steps: 3,
      requests: { total: 7, byModel: { 'simulated/sim-primary': 6, 'simulated/sim-fallback': 1 } },
      retries: { total: 3, model: 3, tool: 0, store: 0 },
      fallbacks: 1,
      corrections: { malformed_json: 1 },
      contextReductions: 0,
      toolCalls: { get_weather: 1 },
      errors: {
        'provider.rate_limited': 1,
        'tool.invalid_input': 1,
        'provider.overloaded': 1,
        'provider.server_error': 1,
        'provider.invalid_response': 1,
      },
    });
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({
      none: 2,
      rate_limit: 1,
      invalid_tool_arguments: 1,
      overloaded: 1,
      server_error: 1,
      reset: 1,
    });
    expect(result.report.fallbacks.used).toEqual([
      {
        step: 3,
        from: 'simulated/sim-primary',
        to: 'simulated/sim-fallback',
        errorCode: 'provider.invalid_response',
      },
    ]);
    expect(events.filter((event) => event.type === 'retry-scheduled')).toHaveLength(3);
    expect(events.filter((event) => event.type === 'fallback-used')).toHaveLength(1);
  });

  it('fails on an auth error without retrying or falling back', async () => {
    const running = await servers.start({ apiKey: 'right-key' });
    const primary = simulated({ server: running });
    const backup = primary.withModel('sim-fallback');
    const result = await agent({ model: primary, fallbacks: [backup], retry: { delay: constant(0) } }).run(
      'hello',
    );
    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('model_error');
    expect(result.error?.code).toBe('provider.auth');
    // Refused before its body was read, so the server never learnt the model: it counts as `simulated/?`.
    expect(serverRequests(running)).toEqual({ total: 1, byModel: { 'simulated/?': 1 } });
    expect(running.requests.map((record) => record.status)).toEqual([401]);
    expect(reportCounts(result.report)).toEqual({
      steps: 1,
      requests: { total: 1, byModel: { 'simulated/sim-primary': 1 } },
      retries: { total: 0, model: 0, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: {},
      contextReductions: 0,
      toolCalls: {},
      errors: { 'provider.auth': 1 },
    });
  });

  it('reduces the conversation on a context overflow and goes on', async () => {
    const running = await servers.start({ contextWindowTokens: 60 });
    const model = simulated({ server: running });
    const long = 'earlier detail '.repeat(20);
    const result = await agent({ model, retry: { delay: constant(0) } }).run([
      { role: 'user', content: 'Summarise our chat.' },
      { role: 'assistant', content: long },
      { role: 'user', content: long },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'Go on.' },
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
    expect(running.requests.map((record) => [record.fault, record.status])).toEqual([
      ['context_overflow', 400],
      ['none', 200],
    ]);
  });
});
