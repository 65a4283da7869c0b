// The simulated server's quota (requests and tokens per window, per key, with OpenAI's headers) against keel's pace
// governor: with `pace: true` the agent waits for its window instead of drawing 429s; without it, retries draw them.
import { agent, constant } from '@keel/core';
import { FakeClock } from '@keel/core/testing';
import { openaiCompatible } from '@keel/openai';
import { type SimulatedServer, startSimulatedServer } from '@keel/simulated';
import { afterEach, expect, it } from 'vitest';

let server: SimulatedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs `runs` runs at once after one that learns the window, moving the fake clock on until all have ended. */
async function burst(pace: boolean): Promise<{ refused: number; completed: number }> {
  const clock = new FakeClock(1_000_000);
  server = await startSimulatedServer({
    clock,
    quota: { requestsPerWindow: 4, tokensPerWindow: 1_000_000, windowMs: 1_000 },
  });
  const assistant = agent({
    model: openaiCompatible({ baseUrl: server.url, model: 'gpt-4.1-mini' }),
    clock,
    pace,
    breaker: false,
    retry: { maxAttempts: 10, delay: constant(50), runBudget: { maxRetries: 100, ratio: false } },
  });
  await assistant.run('Say hello');
  const runs = Array.from({ length: 8 }, (_, index) => assistant.run(`Say hello to ${index}`));
  let pending = runs.length;
  for (const run of runs) void run.finally(() => pending--);
  while (pending > 0) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(10);
  }
  const results = await Promise.all(runs);
  return {
    refused: server.requests.filter((record) => record.status === 429).length,
    completed: results.filter((result) => result.status === 'completed').length,
  };
}

it('with pace, a burst of runs is spaced over its windows and draws no 429; without, it draws them', async () => {
  const paced = await burst(true);
  const unpaced = await burst(false);
  expect(paced.completed).toBe(8);
  // 4 requests per 1,000 ms window: the 8 runs go 250 ms apart once the first window is spent.
  expect(paced.refused).toBe(0);
  expect(unpaced.refused).toBeGreaterThanOrEqual(4);
  console.log(`quota burst: 429s with pace ${paced.refused}, without ${unpaced.refused}`);
}, 60_000);
