// The run loop against the simulated server over real HTTP, one transient fault kind at a time: the first request
// fails the way a hosted model's would on the wire, the loop retries it once, and the run completes. The report must
// count exactly what the server received and did.

import { agent, constant, type ErrorCode, type RunResult } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appliedFaults,
  reportCounts,
  serverPool,
  serverRequests,
  weatherTool,
} from './agent-http-fixture.js';
import type { FaultKind } from './faults.js';
import { simulated } from './provider.js';

const servers = serverPool();
afterEach(servers.closeAll);

const QUESTION = 'What is the weather in Paris?';

/** What one retried fault leaves in the report: the default brain needs two steps (the tool call, the answer). */
function expectedCounts(code: ErrorCode) {
  return {
    steps: 2,
    requests: { total: 3, byModel: { 'simulated/sim-primary': 3 } },
    retries: { total: 1, model: 1, tool: 0, store: 0 },
    fallbacks: 0,
    corrections: {},
    contextReductions: 0,
    toolCalls: { get_weather: 1 },
    errors: { [code]: 1 },
  };
}

function expectCompleted(result: RunResult): void {
  expect(result.error).toBeUndefined();
  expect(result.status).toBe('completed');
  expect(result.stopReason).toBe('final_answer');
  expect(result.output).toContain('Sunny in Paris, 21°C');
}

describe('run loop over HTTP: one transient fault, retried', () => {
  const cases: [FaultKind, number | undefined, ErrorCode][] = [
    ['rate_limit', 429, 'provider.rate_limited'],
    ['server_error', 500, 'provider.server_error'],
    ['bad_gateway', 502, 'provider.server_error'],
    ['unavailable', 503, 'provider.overloaded'],
    ['overloaded', 529, 'provider.overloaded'],
    // The next three answer 200 and then break the body: cut off, not JSON, or reset half way.
    ['truncated_json', 200, 'provider.invalid_response'],
    ['malformed_json', 200, 'provider.invalid_response'],
    ['reset', 200, 'provider.invalid_response'],
  ];

  it.each(cases)(
    '%s (HTTP %s) becomes %s, is retried once and the run completes',
    async (kind, status, code) => {
      const running = await servers.start({
        models: { 'sim-primary': { faults: { retryAfterMs: 0, sequence: [kind] } } },
      });
      const result = await agent({
        model: simulated({ server: running }),
        tools: [weatherTool],
        retry: { delay: constant(0) },
      }).run(QUESTION);

      expectCompleted(result);
      expect(reportCounts(result.report)).toEqual(expectedCounts(code));
      expect(result.report.requests).toEqual(serverRequests(running));
      expect(appliedFaults(running)).toEqual({ [kind]: 1, none: 2 });
      expect(running.requests.map((record) => record.status)).toEqual([status, 200, 200]);
    },
  );

  it('hang: the model timeout (on a fake clock) ends the hanging request, which is retried once', async () => {
    const clock = new FakeClock();
    let hanging!: () => void;
    const hangStarted = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const running = await servers.start({
      models: { 'sim-primary': { faults: { sequence: ['hang'] } } },
      onRequest: (record) => {
        if (record.fault === 'hang') hanging();
      },
    });
    const pending = agent({
      model: simulated({ server: running }),
      tools: [weatherTool],
      clock,
      modelTimeoutMs: 5_000,
      retry: { delay: constant(0) },
    }).run(QUESTION);

    await hangStarted;
    const startedMs = clock.now();
    await clock.advance(4_999);
    expect(running.requests).toHaveLength(1);
    await clock.advance(1);
    // From here only zero-delay timers (the retry's wait) are due: fire them, without moving time, until the run ends.
    const result = await clock.runUntilSettled(pending, { stepMs: 0 });

    expectCompleted(result);
    expect(clock.now() - startedMs).toBe(5_000);
    expect(reportCounts(result.report)).toEqual(expectedCounts('network.timeout'));
    expect(result.report.requests).toEqual(serverRequests(running));
    expect(appliedFaults(running)).toEqual({ hang: 1, none: 2 });
    expect(running.requests.map((record) => record.status)).toEqual([undefined, 200, 200]);
  });
});
