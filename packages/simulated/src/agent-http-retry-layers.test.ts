// Retry layers over real HTTP: the provider does not retry on its own, so the server sees exactly the attempts the
// loop's retry policy makes; and one budget caps every retry of a run, so a run under a 30% fault rate never sends
// more requests than its steps, its fallbacks and that budget allow.

import { agent, constant } from '@keel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { reportCounts, serverPool, serverRequests, weatherTool } from './agent-http-fixture.js';
import { simulated } from './provider.js';

const servers = serverPool();
afterEach(servers.closeAll);

const QUESTION = 'What is the weather in Paris?';

describe('run loop over HTTP: no retry layer stacks', () => {
  it('503 on every request with maxAttempts 3: the server receives exactly 3 requests', async () => {
    const running = await servers.start({ faults: { rates: { unavailable: 1 } } });
    const result = await agent({
      model: simulated({ server: running }),
      tools: [weatherTool],
      retry: { maxAttempts: 3, delay: constant(0) },
    }).run(QUESTION);

    expect(result.status).toBe('failed');
    expect(result.stopReason).toBe('model_error');
    expect(result.error?.code).toBe('provider.overloaded');
    expect(serverRequests(running)).toEqual({ total: 3, byModel: { 'simulated/sim-primary': 3 } });
    expect(reportCounts(result.report)).toEqual({
      steps: 1,
      requests: { total: 3, byModel: { 'simulated/sim-primary': 3 } },
      retries: { total: 2, model: 2, tool: 0, store: 0 },
      fallbacks: 0,
      corrections: {},
      contextReductions: 0,
      toolCalls: {},
      errors: { 'provider.overloaded': 3 },
    });
  });

  it('with one fallback, also failing: exactly 3 requests to each model', async () => {
    const running = await servers.start({ faults: { rates: { unavailable: 1 } } });
    const primary = simulated({ server: running });
    const result = await agent({
      model: primary,
      fallbacks: [primary.withModel('sim-fallback')],
      tools: [weatherTool],
      retry: { maxAttempts: 3, delay: constant(0) },
    }).run(QUESTION);

    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('provider.overloaded');
    const counted = { total: 6, byModel: { 'simulated/sim-primary': 3, 'simulated/sim-fallback': 3 } };
    expect(serverRequests(running)).toEqual(counted);
    expect(result.report.requests).toEqual(counted);
    expect(result.report.retries).toEqual({ total: 4, model: 4, tool: 0, store: 0 });
    expect(result.report.fallbacks.used).toEqual([
      {
        step: 1,
        from: 'simulated/sim-primary',
        to: 'simulated/sim-fallback',
        errorCode: 'provider.overloaded',
      },
    ]);
  });

  it('with one healthy fallback: 3 requests to the primary, then the fallback finishes the run', async () => {
    const running = await servers.start({
      models: { 'sim-primary': { faults: { rates: { unavailable: 1 } } }, 'sim-fallback': { faults: {} } },
    });
    const primary = simulated({ server: running });
    const result = await agent({
      model: primary,
      fallbacks: [primary.withModel('sim-fallback')],
      tools: [weatherTool],
      retry: { maxAttempts: 3, delay: constant(0) },
    }).run(QUESTION);

    expect(result.status).toBe('completed');
    expect(result.output).toContain('Sunny in Paris, 21°C');
    const counted = { total: 5, byModel: { 'simulated/sim-primary': 3, 'simulated/sim-fallback': 2 } };
    expect(serverRequests(running)).toEqual(counted);
    expect(result.report.requests).toEqual(counted);
    expect(result.report.retries.model).toBe(2);
    expect(result.report.fallbacks.total).toBe(1);
  });
});

describe('run loop over HTTP: one retry budget caps every layer', () => {
  const RUNS = 30;
  const MAX_RETRIES = 2;
  const MAX_TURNS = 6;
  // 30% of requests fail, across the transient kinds (and a broken tool call, which is corrected, not retried).
  const RATES = {
    rate_limit: 0.08,
    server_error: 0.08,
    overloaded: 0.06,
    reset: 0.04,
    invalid_tool_arguments: 0.04,
  };

  it(`${RUNS} seeded runs under a 30% fault rate never exceed steps + fallbacks + ${MAX_RETRIES} retries`, async () => {
    const outcomes: string[] = [];
    let budgetReached = 0;
    let faulted = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const running = await servers.start({
        models: {
          'sim-primary': { faults: { seed, retryAfterMs: 0, rates: RATES } },
          'sim-fallback': { faults: { seed: seed + 1_000, retryAfterMs: 0, rates: RATES } },
        },
      });
      const primary = simulated({ server: running });
      const { report, status, error } = await agent({
        model: primary,
        fallbacks: [primary.withModel('sim-fallback')],
        tools: [weatherTool],
        limits: { maxTurns: MAX_TURNS },
        retry: { maxAttempts: 3, delay: constant(0), runBudget: { maxRetries: MAX_RETRIES } },
      }).run(QUESTION);

      expect(report.requests).toEqual(serverRequests(running));
      // The loop's only other sources of requests: a step's first call, and the first call to each fallback.
      expect(report.contextReductions).toBe(0);
      expect(report.requests.total).toBe(report.steps + report.fallbacks.total + report.retries.model);
      expect(report.retries.total).toBeLessThanOrEqual(MAX_RETRIES);
      expect(report.steps).toBeLessThanOrEqual(MAX_TURNS);
      expect(report.fallbacks.total).toBeLessThanOrEqual(1);
      expect(report.requests.total).toBeLessThanOrEqual(MAX_TURNS + 1 + MAX_RETRIES);
      expect(['completed', 'failed']).toContain(status);
      outcomes.push(status === 'completed' ? status : `${status}:${error?.code}`);
      if (report.retries.total === MAX_RETRIES) budgetReached++;
      faulted += running.requests.filter((record) => record.fault !== 'none').length;
      await servers.closeAll();
    }
    // The schedule really did fault, and some runs really did spend the whole budget: the bound was tested.
    expect(faulted).toBeGreaterThan(RUNS / 2);
    expect(budgetReached).toBeGreaterThan(0);
    expect(outcomes).toContain('failed:policy.budget_exhausted');
    expect(outcomes.filter((outcome) => outcome === 'completed').length).toBeGreaterThan(RUNS / 2);
  });
});
