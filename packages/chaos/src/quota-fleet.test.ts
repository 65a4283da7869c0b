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

/** The built-in scenario at a test's size: 4 requests a 1 s window, 12 runs of 2 requests each. */
const FLEET: ChaosScenario = {
  ...SCENARIOS.find((scenario) => scenario.name === 'quota')!,
  name: 'quota-fleet',
  quota: { requestsPerWindow: 4, tokensPerWindow: 100_000, windowMs: 1_000 },
  arrivalMs: 1_500,
};
/** The same in one process: there the governor sees every call sent on the key. */
const SINGLE: ChaosScenario = { ...FLEET, name: 'quota-single', workers: 1 };

function subject(pace: boolean) {
  const made = createChaosSubject({ pace });
  return { ...made, worker: { module: SUBJECT_MODULE, options: { pace } } };
}

describe('the quota scenario', () => {
  it('runs the runs in worker processes against one key: keel with its governor completes them all, and in one ' +
    'process draws fewer 429s than without it', async () => {
    const report = await runChaos({
      subjects: [subject(true), subject(false)],
      task: 'What is the weather in Paris?',
      scenarios: [FLEET, SINGLE],
      runs: 12,
      seed: 3,
    });
    console.log(renderTable(report));
    const card = (scenario: string, name: string) =>
      report.scorecards.find((entry) => entry.scenario === scenario && entry.subject === name)!;
    for (const scenario of ['quota-fleet', 'quota-single']) {
      const paced = card(scenario, 'keel-pace');
      expect(paced.completed, scenario).toBe(12);
      expect(paced.untyped + paced.hung, scenario).toBe(0);
      // 24 requests for 4 a second, arriving within 1.5 s: more than the windows allow.
      expect(card(scenario, 'keel-no-pace').refusals!.requests, scenario).toBeGreaterThan(0);
    }
    // In one process the governor knows of every call on the key. Three processes with a governor each (until they
    // share one) each read the remaining count the others are spending too: their 429s are measured, not asserted.
    const single = card('quota-single', 'keel-pace').refusals!.requests;
    expect(single).toBeLessThan(card('quota-single', 'keel-no-pace').refusals!.requests);
    expect(renderTable(report)).toMatch(/429s/);
  }, 240_000);
});
