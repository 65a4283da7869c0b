// Shared by this package's tests, which speak to the simulated OpenAI-compatible server through @ai-sdk/openai. Not
// exported from the package.
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { tool } from '@keel/core';
import type { FakeClock } from '@keel/core/testing';
import { type SimulatedServer, type SimulatedServerOptions, startSimulatedServer } from '@keel/simulated';

/** Starts servers and closes every one of them at the end of each test (`afterEach(servers.closeAll)`). */
export function serverPool() {
  const started: SimulatedServer[] = [];
  return {
    async start(options: SimulatedServerOptions = {}): Promise<SimulatedServer> {
      const server = await startSimulatedServer(options);
      started.push(server);
      return server;
    },
    async closeAll(): Promise<void> {
      await Promise.all(started.splice(0).map((server) => server.close()));
    },
  };
}

/** A model of the simulated server through the AI SDK's OpenAI provider (Chat Completions). */
export function chatModel(server: SimulatedServer, model = 'sim-primary'): LanguageModelV3 {
  return createOpenAI({ baseURL: server.url, apiKey: 'sk-test-key' }).chat(model);
}

/** Chat completion requests the server received, by model. */
export function requestsByModel(server: SimulatedServer): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of server.requests) {
    if (record.path !== '/v1/chat/completions') continue;
    const model = record.model ?? '?';
    counts[model] = (counts[model] ?? 0) + 1;
  }
  return counts;
}

/**
 * Moves a fake clock through each wait as soon as it is armed: the listener runs when a retry is scheduled, and the
 * clock advances once the wait has begun (on the next turn of the event loop). Real time never passes.
 */
export function advanceThroughWaits(clock: FakeClock): (event: { type: string; delayMs?: number }) => void {
  return (event) => {
    if (event.type !== 'retry-scheduled' || event.delayMs === undefined) return;
    const delayMs = event.delayMs;
    setImmediate(() => void clock.advance(delayMs));
  };
}

/** The simulated brain's weather tool: it answers `Sunny in <city>, 21°C`. */
export const weatherTool = tool({
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
