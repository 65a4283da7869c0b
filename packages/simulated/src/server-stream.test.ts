import { afterEach, describe, expect, it } from 'vitest';
import { type SimulatedServer, startSimulatedServer } from './server.js';
import type { SimulatedServerOptions } from './server-options.js';

const servers: SimulatedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: SimulatedServerOptions = {}): Promise<SimulatedServer> {
  const server = await startSimulatedServer(options);
  servers.push(server);
  return server;
}

const tools = ['get_weather', 'get_time'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: name === 'get_weather' ? 'Current weather for a city' : 'Local time in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}));

function stream(server: SimulatedServer, body: Record<string, unknown> = {}) {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({
      model: 'sim-primary',
      stream: true,
      messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
      ...body,
    }),
  });
}

/** The `data:` payloads of an event stream, in order. */
function events(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

describe('simulated server streaming', () => {
  it('streams text in OpenAI chunks that reassemble the answer, ending with [DONE]', async () => {
    const server = await start({ brain: () => ({ content: 'Sunny in Paris, 21 degrees.' }) });
    const response = await stream(server, { stream_options: { include_usage: true } });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const payloads = events(await response.text());
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((payload) => JSON.parse(payload));
    expect(
      chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === 'chatcmpl-sim-0'),
    ).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Sunny in Paris, 21 degrees.');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(2);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  });

  it('leaves the usage chunk out unless asked', async () => {
    const server = await start();
    const payloads = events(await (await stream(server)).text());
    expect(payloads.some((payload) => payload.includes('"usage"'))).toBe(false);
  });

  it('streams parallel tool calls: name first, then the arguments in pieces', async () => {
    const server = await start();
    const payloads = events(await (await stream(server, { tools })).text());
    const deltas = payloads
      .slice(0, -1)
      .map((payload) => JSON.parse(payload).choices[0])
      .filter((choice) => choice.delta.tool_calls);
    const calls: { id: string; name: string; arguments: string }[] = [];
    for (const choice of deltas) {
      for (const part of choice.delta.tool_calls) {
        calls[part.index] ??= { id: part.id, name: part.function.name, arguments: '' };
        calls[part.index]!.arguments += part.function.arguments;
      }
    }
    expect(calls).toEqual([
      { id: 'call_sim_0_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_sim_0_1', name: 'get_time', arguments: '{"city":"Paris"}' },
    ]);
    expect(deltas.length).toBe(6);
    expect(JSON.parse(payloads.at(-2)!).choices[0].finish_reason).toBe('tool_calls');
  });

  it('reset mid-stream: the first chunks arrive, then the connection is reset', async () => {
    const server = await start({
      faults: { sequence: ['reset'] },
      brain: () => ({ content: 'one two three four five six seven eight' }),
    });
    const response = await stream(server);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    const error = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return undefined;
          text += new TextDecoder().decode(value);
        }
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    const received = events(text).map((payload) => JSON.parse(payload).choices[0].delta.content);
    expect(received).toEqual(['', 'one ', 'two ', 'three ', 'four ']);
  });

  it('truncated_json mid-stream: whole chunks, then half a chunk, and no [DONE]', async () => {
    const server = await start({
      faults: { sequence: ['truncated_json'] },
      brain: () => ({ content: 'a b c d' }),
    });
    const text = await (await stream(server)).text();
    const payloads = events(text);
    expect(payloads).not.toContain('[DONE]');
    expect(() => JSON.parse(payloads.at(-1)!)).toThrow(SyntaxError);
    expect(payloads.slice(0, -1).map((payload) => JSON.parse(payload).choices[0].delta.content)).toEqual([
      '',
      'a ',
      'b ',
    ]);
  });

  it('malformed_json mid-stream: a data line that is not JSON', async () => {
    const server = await start({ faults: { sequence: ['malformed_json'] } });
    const payloads = events(await (await stream(server)).text());
    expect(() => JSON.parse(payloads[0]!)).toThrow();
    expect(payloads.at(-1)).toBe('[DONE]');
  });

  it('status faults are sent as plain HTTP errors even when streaming was asked for', async () => {
    const server = await start({ faults: { sequence: ['rate_limit'] } });
    const response = await stream(server);
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(server.requests[0]).toMatchObject({ stream: true, fault: 'rate_limit' });
  });
});
