// The scenarios are seeded and deterministic: the same seed always gives the same fault sequence (on paper and over
// real HTTP), the same tool faults on the same calls, and the same kill; another seed gives another.
import { planFaults, SIMULATED_FALLBACK_MODEL, SIMULATED_MODEL } from '@keel/simulated';
import { afterEach, describe, expect, it } from 'vitest';
import { killPlan } from './crash-scenario.js';
import { keelSubject } from './keel-subject.js';
import { type ScenarioServer, scenarioSchedule, startScenarioServer } from './scenario-server.js';
import { SCENARIO_NAMES, SCENARIOS, selectScenarios } from './scenarios.js';
import { toolFaultAt } from './tool-faults.js';

function scenario(name: string) {
  return selectScenarios([name])[0]!;
}

describe('scenario fault schedules', () => {
  it('give the same fault sequence for the same seed, and another for another seed', () => {
    for (const entry of SCENARIOS.filter((candidate) => candidate.primary?.rates !== undefined)) {
      const first = planFaults(scenarioSchedule(entry, SIMULATED_MODEL, 7), 300);
      expect(planFaults(scenarioSchedule(entry, SIMULATED_MODEL, 7), 300), entry.name).toEqual(first);
      expect(planFaults(scenarioSchedule(entry, SIMULATED_MODEL, 8), 300), entry.name).not.toEqual(first);
      // The fallback draws from a stream of its own: the two models do not fail in lockstep.
      expect(planFaults(scenarioSchedule(entry, SIMULATED_FALLBACK_MODEL, 7), 300), entry.name).not.toEqual(
        first,
      );
    }
  });

  it('is pinned, so that a change to the generator (which would change every published scorecard) is seen', () => {
    expect(
      planFaults(scenarioSchedule(scenario('transient-30'), SIMULATED_MODEL, 1), 16),
    ).toMatchInlineSnapshot(`
      [
        "none",
        "overloaded",
        "none",
        "none",
        "none",
        "overloaded",
        "bad_gateway",
        "none",
        "none",
        "overloaded",
        "none",
        "none",
        "none",
        "none",
        "none",
        "none",
      ]
    `);
  });

  it('injects each fault kind at its rate', () => {
    const plan = planFaults(scenarioSchedule(scenario('transient-30'), SIMULATED_MODEL, 1), 20_000);
    const share = (kind: string) => plan.filter((fault) => fault === kind).length / plan.length;
    for (const kind of ['server_error', 'bad_gateway', 'unavailable', 'overloaded']) {
      expect(share(kind)).toBeGreaterThan(0.065);
      expect(share(kind)).toBeLessThan(0.085);
    }
    expect(share('none')).toBeCloseTo(0.7, 1);
  });
});

describe('the scenario server', () => {
  const started: ScenarioServer[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((entry) => entry.server.close()));
  });

  const subject = keelSubject({
    fallbacks: 1,
    build: () => {
      throw new Error('not built in this test');
    },
  });

  async function faultsOverHttp(seed: number): Promise<string[]> {
    const scenarioServer = await startScenarioServer(scenario('transient-30'), subject, undefined, seed);
    started.push(scenarioServer);
    scenarioServer.arm(Date.now());
    for (let index = 0; index < 40; index++) {
      const response = await fetch(`${scenarioServer.server.url}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: SIMULATED_MODEL, messages: [{ role: 'user', content: 'Hello' }] }),
      });
      await response.arrayBuffer();
    }
    return scenarioServer.server.requests.map((record) => record.fault);
  }

  it('answers with the same faults, request by request, for the same seed', async () => {
    const first = await faultsOverHttp(3);
    expect(await faultsOverHttp(3)).toEqual(first);
    expect(first).toEqual(planFaults(scenarioSchedule(scenario('transient-30'), SIMULATED_MODEL, 3), 40));
    expect(new Set(first).size).toBeGreaterThan(2);
  });

  it('offers the fallbacks the subject uses, or none when the scenario offers none', async () => {
    const withFallback = await startScenarioServer(scenario('outage-fallback'), subject, undefined, 1);
    const without = await startScenarioServer(scenario('outage-no-fallback'), subject, undefined, 1);
    started.push(withFallback, without);
    expect(withFallback.models.map((model) => model.name)).toEqual([
      SIMULATED_MODEL,
      SIMULATED_FALLBACK_MODEL,
    ]);
    expect(without.models.map((model) => model.name)).toEqual([SIMULATED_MODEL]);
    const startedAtMs = withFallback.server.epochMs + 1_000;
    expect(withFallback.arm(startedAtMs)).toEqual([
      {
        model: SIMULATED_MODEL,
        startMs: startedAtMs + 300,
        endMs: startedAtMs + 1_800,
        fault: 'unavailable',
      },
    ]);
  });

  it('gives a tight context window between the first and the largest prompt of a fault-free run', async () => {
    const calibration = {
      requestsPerRun: 2,
      effectsPerRun: 1,
      tools: ['get_weather'],
      answer: 'done',
      firstPromptTokens: 100,
      largestPromptTokens: 161,
      durationMs: 5,
    };
    const tight = await startScenarioServer(scenario('context-overflow'), subject, calibration, 1);
    started.push(tight);
    expect(tight.models).toEqual([
      { name: SIMULATED_MODEL, contextWindowTokens: 130 },
      { name: SIMULATED_FALLBACK_MODEL, contextWindowTokens: 644 },
    ]);
  });
});

describe('tool faults and kills', () => {
  it('meet the same call with the same fault, whatever else ran, and follow the rates', () => {
    const faults = { failRate: 0.3, hangRate: 0.2 };
    const draws = Array.from({ length: 5_000 }, (_, ordinal) =>
      toolFaultAt(faults, 11, 'run-1', 'get_weather', ordinal),
    );
    expect(
      Array.from({ length: 5_000 }, (_, ordinal) => toolFaultAt(faults, 11, 'run-1', 'get_weather', ordinal)),
    ).toEqual(draws);
    expect(draws.filter((fault) => fault === 'fail').length / draws.length).toBeCloseTo(0.3, 1);
    expect(draws.filter((fault) => fault === 'hang').length / draws.length).toBeCloseTo(0.2, 1);
    const otherRun = Array.from({ length: 50 }, (_, ordinal) =>
      toolFaultAt(faults, 11, 'run-2', 'get_weather', ordinal),
    );
    expect(otherRun).not.toEqual(draws.slice(0, 50));
    expect(toolFaultAt(undefined, 11, 'run-1', 'get_weather', 0)).toBe('none');
  });

  it('time out after the effect only calls of tools that are not idempotent, at the rate asked', () => {
    const faults = { timeoutAfterEffectRate: 0.5 };
    const ticket = Array.from({ length: 2_000 }, (_, ordinal) =>
      toolFaultAt(faults, 11, 'run-1', 'create_ticket', ordinal, false),
    );
    expect(ticket.filter((fault) => fault === 'timeout-after-effect').length / ticket.length).toBeCloseTo(
      0.5,
      1,
    );
    expect(
      Array.from({ length: 200 }, (_, ordinal) =>
        toolFaultAt(faults, 11, 'run-1', 'get_weather', ordinal, true),
      ),
    ).toEqual(Array.from({ length: 200 }, () => 'none'));
  });

  it('kill the worker at the same point for the same seed, a fifth to a half of the way through', () => {
    const plan = killPlan(1, 'crash', 50, 2);
    expect(killPlan(1, 'crash', 50, 2)).toEqual(plan);
    expect(plan.unit).toBe('effect');
    expect(plan.afterUnits).toBeGreaterThanOrEqual(20);
    expect(plan.afterUnits).toBeLessThanOrEqual(50);
    expect(plan.delayMs).toBeLessThanOrEqual(3);
    const seeds = Array.from({ length: 20 }, (_, seed) => killPlan(seed, 'crash', 50, 2).afterUnits);
    expect(new Set(seeds).size).toBeGreaterThan(5);
    expect(killPlan(1, 'crash', 10, 0)).toMatchObject({ unit: 'start' });
  });
});

describe('selectScenarios', () => {
  it('keeps the suite order and names unknown scenarios', () => {
    expect(selectScenarios(['crash', 'transient-10']).map((entry) => entry.name)).toEqual([
      'transient-10',
      'crash',
    ]);
    expect(selectScenarios().map((entry) => entry.name)).toEqual(SCENARIO_NAMES);
    expect(() => selectScenarios(['transient-50'])).toThrow(
      /Unknown chaos scenario "transient-50"; the scenarios are: transient-10/,
    );
    expect(() => selectScenarios([])).toThrow(/Name at least one scenario/);
  });

  it('names every scenario the issue lists, each with goals and a description', () => {
    expect(SCENARIO_NAMES).toEqual([
      'transient-10',
      'transient-30',
      'rate-limit-storm',
      'outage-fallback',
      'outage-no-fallback',
      'hang',
      'reset',
      'stream-cut',
      'stall',
      'empty-stream',
      'malformed-tool-calls',
      'context-overflow',
      'max-tokens',
      'tool-flaky',
      'tool-hang',
      'tool-timeout-recall',
      'crash',
      'quota',
      'nested',
      'nested-crash',
      'nested-handoff',
    ]);
    for (const entry of SCENARIOS) {
      expect(entry.goals, entry.name).toContain('typed');
      expect(entry.description.length, entry.name).toBeGreaterThan(30);
    }
  });
});
