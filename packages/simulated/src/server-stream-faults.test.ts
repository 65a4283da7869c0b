// The streaming faults of the simulated server (stream_cut, stall, slow_drip, empty_stream), read by keel's own
// OpenAI provider and through an agent that streams.
import { agent, constant } from '@keel/core';
import { openaiCompatible } from '@keel/openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { FaultKind } from './faults.js';
import { type SimulatedServer, startSimulatedServer } from './server.js';

const servers: SimulatedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(sequence: FaultKind[], hangMs?: number): Promise<SimulatedServer> {
  const server = await startSimulatedServer({
    brain: () => ({ content: 'Sunny in Paris, 21 degrees, with a light breeze from the west.' }),
    faults: { sequence, ...(hangMs === undefined ? {} : { hangMs }) },
  });
  servers.push(server);
  return server;
}

function generate(server: SimulatedServer, deltas: string[]) {
  return openaiCompatible({ baseUrl: server.url, model: 'sim-primary' }).generate({
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    signal: new AbortController().signal,
    onTextDelta: (delta) => deltas.push(delta),
  });
}

describe('simulated server streaming faults', () => {
  it('stream_cut resets the stream at a byte offset drawn from the seed: the same offset for the same request', async () => {
    const cuts: string[] = [];
    for (let round = 0; round < 2; round++) {
      const server = await start(['stream_cut']);
      const deltas: string[] = [];
      const error = await generate(server, deltas).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ retryable: true });
      expect(server.requests[0]!.fault).toBe('stream_cut');
      cuts.push(deltas.join(''));
    }
    expect(cuts[0]).toBe(cuts[1]);
  });

  it('empty_stream sends no answer: provider.invalid_response', async () => {
    const server = await start(['empty_stream']);
    const error = await generate(server, []).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'provider.invalid_response', retryable: true });
  });

  it('slow_drip sends the whole answer, event by event', async () => {
    const server = await start(['slow_drip']);
    const deltas: string[] = [];
    const answer = await generate(server, deltas);
    expect(answer.content).toBe('Sunny in Paris, 21 degrees, with a light breeze from the west.');
    expect(deltas.join('')).toBe(answer.content);
  });

  it('an agent that streams completes through stream_cut, stall (cut by hangMs) and empty_stream, each answer once', async () => {
    const server = await start(['stream_cut', 'stall', 'empty_stream'], 200);
    const deltas: string[] = [];
    const result = await agent({
      model: openaiCompatible({ baseUrl: server.url, model: 'sim-primary' }),
      retry: { delay: constant(0), maxAttempts: 4 },
    }).run('Weather in Paris?', { onTextDelta: (delta) => deltas.push(delta) });
    expect(result.status).toBe('completed');
    expect(result.output).toBe('Sunny in Paris, 21 degrees, with a light breeze from the west.');
    expect(deltas.join('')).toBe(result.output);
    expect(server.requests.map((request) => request.fault)).toEqual([
      'stream_cut',
      'stall',
      'empty_stream',
      'none',
    ]);
  });
});
