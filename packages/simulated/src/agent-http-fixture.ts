// Shared by the tests that run the agent loop against the simulated server over real HTTP. Not exported from the
// package: it exists so those tests compare the run's report with the server's own count in one way.
import { type RunReport, tool } from '@keel/core';
import { type SimulatedServer, startSimulatedServer } from './server.js';
import type { SimulatedServerOptions } from './server-options.js';

/** An idempotent tool the default brain calls for a weather question; it answers `Sunny in <city>, 21°C`. */
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

/** Starts servers and closes every one of them at the end of each test (`afterEach(servers.closeAll)`). */
export function serverPool(): {
  start(options?: SimulatedServerOptions): Promise<SimulatedServer>;
  closeAll(): Promise<void>;
} {
  const started: SimulatedServer[] = [];
  return {
    async start(options = {}) {
      const server = await startSimulatedServer(options);
      started.push(server);
      return server;
    },
    async closeAll() {
      await Promise.all(started.splice(0).map((server) => server.close()));
    },
  };
}

/**
 * The chat completion requests the server received, keyed as the report keys them (`simulated/<model>`); a request
 * refused before its body was read (a 401) has no model and counts under `simulated/?`.
 */
export function serverRequests(server: SimulatedServer): RunReport['requests'] {
  const byModel: Record<string, number> = {};
  let total = 0;
  for (const record of server.requests) {
    if (record.path !== '/v1/chat/completions') continue;
    total++;
    const key = `simulated/${record.model ?? '?'}`;
    byModel[key] = (byModel[key] ?? 0) + 1;
  }
  return { total, byModel };
}

/** The counting parts of a report, for one exact `toEqual` per test. */
export function reportCounts(report: RunReport) {
  return {
    steps: report.steps,
    requests: report.requests,
    retries: report.retries,
    fallbacks: report.fallbacks.total,
    corrections: report.corrections.byKind,
    contextReductions: report.contextReductions,
    toolCalls: report.toolCalls.byTool,
    errors: report.errors.byCode,
  };
}

/** The fault kinds the server applied, without the zero counts. */
export function appliedFaults(server: SimulatedServer): Record<string, number> {
  return Object.fromEntries(Object.entries(server.stats).filter(([, count]) => count > 0));
}
