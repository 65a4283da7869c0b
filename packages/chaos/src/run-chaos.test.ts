// A small real run: a keel agent through two scenarios over real HTTP, every request counted by the simulated server;
// a subject that hangs or throws is counted hung or untyped at the cap, never waited on longer.
import { agent, constant, tool } from '@keel/core';
import { describe, expect, it } from 'vitest';
import { keelSubject } from './keel-subject.js';
import { renderTable } from './render-table.js';
import { runChaos } from './run-chaos.js';
import type { ChaosSubject } from './subject.js';

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  idempotent: true,
  timeoutMs: 1_000,
  execute: ({ city }: { city: string }) => `Sunny in ${city}`,
});

const keel = keelSubject({
  fallbacks: 1,
  build: ({ models: [model, ...fallbacks], environment }) => ({
    agent: agent({
      model,
      fallbacks,
      tools: environment.instrumentTools([weather]),
      // Short waits, so that the retries of a small run take milliseconds.
      retry: { delay: constant(5) },
    }),
  }),
});

const TASK = 'What is the weather in Paris?';

describe('runChaos over real HTTP', () => {
  it('scores a keel agent in two scenarios, counting every request the server received', async () => {
    const progress: string[] = [];
    const report = await runChaos({
      subjects: [keel],
      task: TASK,
      scenarios: ['transient-30', 'tool-flaky'],
      runs: 8,
      seed: 5,
      onScorecard: (card) => progress.push(`${card.scenario}:${card.runs}`),
    });
    expect(progress).toEqual(['transient-30:8', 'tool-flaky:8']);
    expect(report.subjects).toEqual([
      {
        name: 'keel',
        calibration: expect.objectContaining({ requestsPerRun: 2, effectsPerRun: 1 }),
      },
    ]);
    const [transient, flaky] = report.scorecards;
    for (const card of [transient!, flaky!]) {
      expect(card.untyped + card.hung).toBe(0);
      expect(card.duplicateSideEffects).toBe(0);
      const binned = card.timeline.bins.reduce((sum, bin) => sum + bin.ok + bin.faulted + bin.down, 0);
      expect(binned).toBe(card.requests.total);
      expect(card.completed).toBeGreaterThanOrEqual(7);
      // Every answered request is priced (the simulated model at gpt-4.1-mini's price): a fraction of a cent per run.
      expect(card.costPerCompletedRunUsd).toBeGreaterThan(0);
      expect(card.costPerCompletedRunUsd).toBeLessThan(0.01);
    }
    // 30% of the requests fail: the retries show in the count, every request of a completed run is needed.
    expect(transient!.requests.total).toBeGreaterThan(16);
    expect(transient!.timeline.bins.some((bin) => bin.faulted > 0)).toBe(true);
    // Tool faults cost tool retries, not model requests.
    expect(flaky!.requests.total).toBe(16);
    expect(renderTable(report)).toContain('transient-30');
    expect(renderTable(report)).toMatch(/cost\/completed/);
  });

  it('counts a run that outlives the cap as hung and a run that throws as untyped, without waiting for them', async () => {
    let calls = 0;
    const stubborn: ChaosSubject = {
      name: 'stubborn',
      fallbacks: 0,
      async prepare(environment) {
        const calibrating = environment.scenario === 'calibration';
        return {
          run: async ({ runId }) => {
            if (calibrating) return { status: 'completed', output: 'Hello.', typed: true };
            calls++;
            // One run throws, the others ignore their signal and never end.
            if (runId.endsWith('-0')) throw new TypeError('Cannot read properties of undefined');
            return new Promise(() => undefined);
          },
          close: async () => undefined,
        };
      },
    };
    const started = Date.now();
    const report = await runChaos({
      subjects: [stubborn],
      task: 'Say hello.',
      scenarios: ['tool-flaky'],
      runs: 3,
      capMs: 300,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(calls).toBe(3);
    expect(report.scorecards[0]).toMatchObject({
      completed: 0,
      untyped: 1,
      hung: 2,
      failuresByCode: { 'untyped:TypeError': 1, hung: 2 },
      goals: expect.arrayContaining([expect.objectContaining({ goal: 'typed', met: false })]),
    });
  });

  it('runs a subject limited to some scenarios only in those, and leaves out one none of whose scenarios runs', async () => {
    const prepared: string[] = [];
    const limited = (name: string, scenarios: string[]): ChaosSubject => ({
      name,
      fallbacks: 0,
      scenarios,
      prepare: async (environment) => {
        prepared.push(`${name}:${environment.scenario}`);
        return {
          run: async () => ({ status: 'completed', output: 'Hello.', typed: true }),
          close: async () => undefined,
        };
      },
    });
    const report = await runChaos({
      subjects: [limited('only-reset', ['reset']), limited('only-quota', ['quota'])],
      task: 'Say hello.',
      scenarios: ['transient-10', 'reset'],
      runs: 1,
    });
    expect(prepared).toEqual(['only-reset:calibration', 'only-reset:reset']);
    expect(report.subjects.map((subject) => subject.name)).toEqual(['only-reset']);
    expect(report.scorecards.map((card) => `${card.scenario}:${card.subject}`)).toEqual(['reset:only-reset']);
  });

  it('refuses a subject that cannot complete the task without faults, saying so', async () => {
    const broken: ChaosSubject = {
      name: 'broken',
      fallbacks: 0,
      prepare: async () => ({
        run: async () => ({ status: 'failed', code: 'provider.auth', typed: true }),
        close: async () => undefined,
      }),
    };
    await expect(runChaos({ subjects: [broken], task: TASK, scenarios: ['reset'] })).rejects.toThrow(
      'broken does not complete the task on a provider without faults: its run ended failed (provider.auth)',
    );
  });

  it('checks its options', async () => {
    await expect(runChaos({ subjects: [], task: TASK })).rejects.toThrow(/subjects must name at least one/);
    await expect(runChaos({ subjects: [keel, keel], task: TASK })).rejects.toThrow(
      /two subjects share a name/,
    );
    await expect(runChaos({ subjects: [keel], task: ' ' })).rejects.toThrow(
      /task must be a non-empty string/,
    );
    await expect(runChaos({ subjects: [keel], task: TASK, runs: 0 })).rejects.toThrow(
      /runs must be an integer/,
    );
    await expect(runChaos({ subjects: [keel], task: TASK, scenarios: ['nope'] })).rejects.toThrow(
      /Unknown chaos scenario "nope"/,
    );
    await expect(runChaos({ subjects: [keel], task: TASK, rounds: 3 } as never)).rejects.toThrow(
      /Unknown runChaos\(\) option rounds/,
    );
  });
});
