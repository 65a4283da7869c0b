// The run loop against the simulated provider over real HTTP on 127.0.0.1: every fault travels the wire path a
// hosted model's would (status codes, headers, broken bodies), and the server's own count of what it received is
// checked against the run's report.
import { afterEach, describe, expect, it } from 'vitest';
import { agent, constant, type RunEvent, tool } from '@keel/core';
import { type SimulatedServer, simulated, startSimulatedServer } from './index.js';

const servers: SimulatedServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function server(options: Parameters<typeof startSimulatedServer>[0]): Promise<SimulatedServer> {
  const started = await startSimulatedServer(options);
  servers.push(started);
  return started;
}

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  idempotent: true,
  execute: ({ city }: { city: string }) => `Sunny in ${city}, 21°C`,
});

function chatRequests(running: SimulatedServer, model?: string): number {
  return running.requests.filter(
    (record) => record.path.endsWith('/chat/completions') && (model === undefined || record.model === model),
  ).length;
}

describe('run loop over HTTP (simulated provider)', () => {
  it('retries, corrects and falls back, and reports exactly the requests the server received', async () => {
    const running = await server({
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
      tools: [weather],
      retry: { delay: constant(0) },
    });

    const result = await assistant.run('What is the weather in Paris?', {
      onEvent: (event) => events.push(event),
    });

    expect(result.status).toBe('completed');
    expect(result.output).toContain('Sunny in Paris');
    expect(result.report.requests.total).toBe(chatRequests(running));
    expect(result.report.requests.byModel).toEqual({
      'simulated/sim-primary': chatRequests(running, 'sim-primary'),
      'simulated/sim-fallback': chatRequests(running, 'sim-fallback'),
    });
    expect(result.report.requests.byModel['simulated/sim-primary']).toBe(6);
    expect(result.report.errors.byCode).toMatchObject({
      'provider.rate_limited': 1,
      'tool.invalid_input': 1,
      'provider.overloaded': 1,
      'provider.server_error': 1,
    });
    expect(result.report.corrections.byKind).toEqual({ malformed_json: 1 });
    expect(result.report.fallbacks.used).toMatchObject([
      { from: 'simulated/sim-primary', to: 'simulated/sim-fallback' },
    ]);
    expect(result.report.toolCalls.byTool).toEqual({ get_weather: 1 });
    expect(events.filter((event) => event.type === 'retry-scheduled')).toHaveLength(3);
  });

  it('fails on an auth error without retrying or falling back', async () => {
    const running = await server({ apiKey: 'right-key' });
    const primary = simulated({ server: running });
    const backup = primary.withModel('sim-fallback');
    const result = await agent({ model: primary, fallbacks: [backup], retry: { delay: constant(0) } }).run(
      'hello',
    );
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.auth');
    expect(chatRequests(running)).toBe(1);
    expect(result.report.requests.total).toBe(1);
  });

  it('reduces the conversation on a context overflow and goes on', async () => {
    const running = await server({ contextWindowTokens: 60 });
    const model = simulated({ server: running });
    const long = 'earlier detail '.repeat(20);
    const result = await agent({ model, retry: { delay: constant(0) } }).run([
      { role: 'user', content: 'Summarise our chat.' },
      { role: 'assistant', content: long },
      { role: 'user', content: long },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'Go on.' },
    ]);
    expect(result.report.errors.byCode['provider.context_overflow']).toBeGreaterThanOrEqual(1);
    expect(result.report.contextReductions).toBeGreaterThanOrEqual(1);
    expect(result.status).toBe('completed');
    expect(result.report.requests.total).toBe(chatRequests(running));
  });
});
