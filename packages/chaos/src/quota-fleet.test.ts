// The quota scenario's fleet, small: 3 real worker processes share one API key against the simulated server's quota
// (requests and tokens per window, OpenAI's headers, 429 with retry-after-ms). keel with its pace governor on draws
// fewer 429s than with it off, and completes every run. Real processes and real time: the window is short, the
// sizes small, and only the relative result is asserted.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderTable } from './render-table.js';
import { runChaos } from './run-chaos.js';
import type { ChaosScenario } from './scenario.js';
import { SCENARIOS } from './scenarios.js';
import { createChaosSubject } from './test-support/quota-subject.js';

const SUBJECT_MODULE = fileURLToPath(new URL('../dist/test-support/quota-subject.js', import.meta.url));

/** The built-in scenario at a test's size: 4 requests a 1 s window, 12 runs of 2 requests each from 3 processes. */
const SMALL_QUOTA: ChaosScenario = {
  ...SCENARIOS.find((scenario) => scenario.name === 'quota')!,
  name: 'quota-small',
  quota: { requestsPerWindow: 4, tokensPerWindow: 100_000, windowMs: 1_000 },
  arrivalMs: 1_500,
};

function subject(pace: boolean) {
  const made = createChaosSubject({ pace });
  return { ...made, worker: { module: SUBJECT_MODULE, options: { pace } } };
}

describe('the quota scenario', () => {
  it('runs 3 worker processes against one key: with pace, fewer 429s than without, every run complete', async () => {
    const report = await runChaos({
      subjects: [subject(true), subject(false)],
      task: 'What is the weather in Paris?',
      scenarios: [SMALL_QUOTA],
      runs: 12,
      seed: 3,
    });
    console.log(renderTable(report));
    const [paced, unpaced] = report.scorecards;
    expect(paced!.subject).toBe('keel-pace');
    expect(paced!.completed).toBe(12);
    expect(paced!.untyped + paced!.hung).toBe(0);
    expect(unpaced!.refusals!.requests).toBeGreaterThan(0);
    expect(paced!.refusals!.requests).toBeLessThan(unpaced!.refusals!.requests);
    expect(renderTable(report)).toMatch(/429s/);
  }, 180_000);
});
