// A first agent: a tool, a model with a fallback, a durable run, its result, and a conversation kept in a session.
// Offline, on the simulated provider (a rate limit, a broken tool call and an overload, all recovered):
//   npm run build && node examples/dist/first-agent.js
import { fileURLToPath } from 'node:url';
import type { RunReport, RunStatus } from '@keel/core';
// #region first-agent
import { agent, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { SqliteRunStore } from '@keel/store-sqlite';
import { z } from 'zod';

// #endregion

/** Runs the example; the runs are kept in .keel/keel.db under the current directory. */
export async function main(): Promise<{ status: RunStatus; report: RunReport; session: unknown }> {
  // #region first-agent
  // Offline: the simulated provider. With hosted models: openai('gpt-4.1-mini', { env: process.env }) from
  // @keel/openai, and anthropic('claude-haiku-4-5', { env: process.env }) from @keel/anthropic as the fallback.
  const model = simulated({ faults: 'demo' });
  const fallbackModel = model.withModel('sim-fallback');

  const lastForecasts = new Map<string, { city: string; temperatureC: number }>();
  const weather = tool({
    name: 'get_weather',
    description: 'Current weather for a city',
    input: z.object({ city: z.string() }), // zod 4, any Standard Schema, or plain JSON Schema
    idempotent: true,
    timeoutMs: 5_000,
    async execute({ city }, { signal }) {
      signal.throwIfAborted();
      const forecast = { city, temperatureC: 18 }; // your weather service here, given `signal`
      lastForecasts.set(city, forecast);
      return forecast;
    },
    // When the call fails (after its retries): another tool, or a value the model is told is degraded.
    fallbacks: [{ value: ({ city }) => lastForecasts.get(city) ?? null, reason: 'the last known forecast' }],
  });

  const assistant = agent({
    model,
    fallbacks: [fallbackModel],
    tools: [weather],
    limits: { maxTurns: 12, timeoutMs: 120_000 },
    store: new SqliteRunStore('.keel/keel.db'), // optional: makes runs durable and resumable
  });

  const result = await assistant.run('Weather in Paris?', { signal: AbortSignal.timeout(120_000) });
  result.status; // 'completed' | 'failed' | 'interrupted' | 'cancelled'
  result.error?.code; // a stable, documented code
  result.report; // requests by model, retries, fallbacks, breaker moves, corrections, degradations, errors by code
  // #endregion

  // #region sessions
  // A conversation kept across runs and restarts: each completed run appends its turns to the session.
  await assistant.run('I am Ana', { sessionId: 'user-42' });
  const later = await assistant.run('What is my name?', { sessionId: 'user-42' });
  later.session; // { sessionId: 'user-42', outcome: 'saved', version: 2 }
  // #endregion

  await model.close();
  return { status: result.status, report: result.report, session: later.session };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await main(), null, 2));
