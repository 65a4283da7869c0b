// Scenarios from outside: a real module file written to disk, loaded as `keel chaos --scenarios-file` loads it, checked
// field by field, and run by runChaos beside a built-in scenario.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, constant, tool } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { keelSubject } from './keel-subject.js';
import { runChaos } from './run-chaos.js';
import { checkScenario } from './scenario-check.js';
import { loadScenarios } from './scenario-module.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-scenarios-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const SLOW_SEARCH = {
  name: 'slow-weather',
  title: 'a weather service that fails half its calls',
  description: 'Half the weather calls fail before doing anything, as a service answering 503 would.',
  tools: { failRate: 0.5 },
  arrivalMs: 200,
  minimum: 'clean',
  goals: ['completion', 'duplicates', 'typed'],
};

function writeModule(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

describe('scenarios from a module', () => {
  it('loads the `scenarios` export of a file, relative to a directory, and the default export too', async () => {
    writeModule('mine.mjs', `export const scenarios = [${JSON.stringify(SLOW_SEARCH)}];\n`);
    const loaded = await loadScenarios('./mine.mjs', directory);
    expect(loaded).toEqual([SLOW_SEARCH]);
    const single = writeModule(
      'single.mjs',
      `export default ${JSON.stringify({ ...SLOW_SEARCH, name: 'one' })};\n`,
    );
    expect((await loadScenarios(single)).map((scenario) => scenario.name)).toEqual(['one']);
  });

  it("loads the repository's example, examples/chaos-scenarios.mjs, given as typed (no ./)", async () => {
    const root = new URL('../../../', import.meta.url).pathname;
    const loaded = await loadScenarios('examples/chaos-scenarios.mjs', root);
    expect(loaded.map((scenario) => [scenario.name, scenario.goals])).toEqual([
      ['long-outage', ['probes', 'duplicates', 'typed']],
    ]);
  });

  it('says what to fix: a missing module, no export, a bad field, a name taken', async () => {
    await expect(loadScenarios('./absent.mjs', directory)).rejects.toMatchObject({
      code: 'config.invalid',
      message: expect.stringMatching(/Could not load the scenarios module \.\/absent\.mjs/),
    });
    writeModule('empty.mjs', 'export const other = 1;\n');
    await expect(loadScenarios('./empty.mjs', directory)).rejects.toThrow(/exports no scenario/);
    writeModule(
      'bad.mjs',
      `export const scenarios = [${JSON.stringify({ ...SLOW_SEARCH, arrivalMs: -1 })}];\n`,
    );
    await expect(loadScenarios('./bad.mjs', directory)).rejects.toThrow(
      /scenarios\[0\] \("slow-weather"\): arrivalMs must be an integer number of milliseconds from 0 to 60000/,
    );
    writeModule(
      'taken.mjs',
      `export const scenarios = [${JSON.stringify({ ...SLOW_SEARCH, name: 'crash' })}];\n`,
    );
    await expect(loadScenarios('./taken.mjs', directory)).rejects.toThrow(
      /the scenario name "crash" is taken \(by a built-in scenario\)/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, tools: { failRate: 0.6, hangRate: 0.6 } }, 'mine')).toThrow(
      /the rates add up to 1\.2\d*, more than 1/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, primary: { rates: { meteor: 0.1 } } }, 'mine')).toThrow(
      /unknown fault kind "meteor"/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, goals: ['fast'] }, 'mine')).toThrow(
      /goals must be a non-empty array/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, colour: 'red' }, 'mine')).toThrow(/colour/);
    const quota = { requestsPerWindow: 20, tokensPerWindow: 5_000, windowMs: 2_000 };
    expect(checkScenario({ ...SLOW_SEARCH, quota, workers: 3, goals: ['refusals'] }, 'mine')).toMatchObject({
      quota,
      workers: 3,
    });
    expect(() => checkScenario({ ...SLOW_SEARCH, quota: { ...quota, windowMs: 0 } }, 'mine')).toThrow(
      /quota: windowMs must be a positive integer, got 0/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, workers: 0 }, 'mine')).toThrow(
      /workers must be an integer from 1 to 16, got 0/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, workers: 2, crash: true }, 'mine')).toThrow(
      /either crash: true or runs in workers/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, handoff: true }, 'mine')).toThrow(
      /handoff: true needs child/,
    );
    expect(() => checkScenario({ ...SLOW_SEARCH, handoff: 'yes' }, 'mine')).toThrow(
      /handoff must be true or false/,
    );
    // The default written out is accepted, as the README's example writes it.
    expect(checkScenario({ ...SLOW_SEARCH, handoff: false, child: undefined }, 'mine')).toMatchObject({
      handoff: false,
    });
    expect(checkScenario({ ...SLOW_SEARCH, handoff: true, child: {} }, 'mine')).toMatchObject({
      handoff: true,
    });
  });

  it('runs a loaded scenario through runChaos beside a built-in one', async () => {
    writeModule('run.mjs', `export const scenarios = [${JSON.stringify(SLOW_SEARCH)}];\n`);
    const [mine] = await loadScenarios('./run.mjs', directory);
    const weather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      idempotent: true,
      execute: ({ city }: { city: string }) => `Sunny in ${city}`,
    });
    const subject = keelSubject({
      build: ({ models: [model], environment }) => ({
        agent: agent({ model, tools: environment.instrumentTools([weather]), retry: { delay: constant(5) } }),
      }),
    });
    const report = await runChaos({
      subjects: [subject],
      task: 'What is the weather in Paris?',
      scenarios: ['transient-10', mine!],
      runs: 4,
    });
    expect(report.scenarios.map((scenario) => scenario.name)).toEqual(['transient-10', 'slow-weather']);
    const card = report.scorecards.find((entry) => entry.scenario === 'slow-weather')!;
    expect(card.runs).toBe(4);
    expect(card.goals.map((goal) => [goal.goal, goal.met])).toEqual([
      ['completion', true],
      // get_weather is idempotent: no call with side effects ran, so the goal was not exercised.
      ['duplicates', null],
      ['typed', true],
    ]);
  }, 60_000);
});
