import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAgentFile } from '@keel/agent-file';
import { afterAll, describe, expect, it } from 'vitest';
import { agentOptionsFromFile } from '../../build/agent-options.js';
import { KEEL_BINARY, type KeelOutcome, keelBinary } from '../../test-support/keel-cli.js';
import { defaultChaosTask } from './chaos-subject.js';

const example = fileURLToPath(new URL('../../../../../examples/weather.yaml', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function keel(...args: string[]): Promise<KeelOutcome> {
  return keelBinary({ cwd: directory, maxBufferBytes: 16 * 1024 * 1024 }, ...args);
}

describe('keel chaos (the binary)', () => {
  it('scores examples/weather.yaml: progress on stderr, the table on stdout, an HTML report; a worker killed and resumed', async () => {
    expect(
      existsSync(KEEL_BINARY.replace('bin/keel.js', 'dist/main.js')),
      'build first: npx tsc -b tsconfig.build.json',
    ).toBe(true);
    const outcome = await keel(
      'chaos',
      example,
      '--scenarios',
      'transient-10,crash',
      '--runs',
      '4',
      '--html',
      'report.html',
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const progress = outcome.stderr
      .split('\n')
      .filter((line) => line.startsWith('✓') || line.startsWith('✗'));
    expect(progress).toEqual([
      expect.stringMatching(/^✓ transient-10 · keel \(weather\): 4\/4 completed, \d+ requests, p99 /),
      expect.stringMatching(/^✓ crash · keel \(weather\): 4\/4 completed, \d+ requests, p99 /),
    ]);
    expect(outcome.stderr).toContain(`report written to ${join(directory, 'report.html')}`);
    const lines = outcome.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^scenario\s+completed\s+req\/completed\s+cost\/completed\s+vs minimum\s+while down\s+p50\s+p99/,
    );
    expect(lines[2]).toMatch(/^transient-10\s+100\.0%/);
    // weather.yaml's only tool is idempotent: the duplicates goal is shown as not exercised, never as met.
    expect(lines[3]).toMatch(
      /^crash\s+100\.0%\s+[\d.]+\s+\$[\d.]+\s+[\d.]+x\s+0\s+.*\s+0\s+0\/0\s+-\s+ok; not exercised: duplicates$/,
    );
    expect(outcome.stdout).toContain('task: What is the weather in Paris?');
    expect(outcome.stdout).toContain('every goal that was exercised was met');
    const html = readFileSync(join(directory, 'report.html'), 'utf8');
    expect(html).toContain('Chart.js v4.6.1');
    expect(html).toContain('id="scenario-crash"');
  });

  it('prints the report as JSON with --json, the same for the same seed', async () => {
    const run = async () => {
      const outcome = await keel(
        'chaos',
        example,
        '--scenarios',
        'reset',
        '--runs',
        '3',
        '--seed',
        '9',
        '--json',
      );
      expect(outcome.code, outcome.stderr).toBe(0);
      return JSON.parse(outcome.stdout);
    };
    const report = await run();
    expect(report).toMatchObject({ seed: 9, runs: 3, task: 'What is the weather in Paris?' });
    expect(report.scorecards).toHaveLength(1);
    expect(report.scorecards[0]).toMatchObject({
      scenario: 'reset',
      subject: 'keel (weather)',
      runs: 3,
      untyped: 0,
      hung: 0,
    });
    expect(report.scorecards[0].goals.map((goal: { goal: string }) => goal.goal)).toEqual([
      'completion',
      'duplicates',
      'typed',
    ]);
  });

  it('shows no duplicate ticket in tool-timeout-recall, and runs scenarios from a file beside it', async () => {
    writeFileSync(
      join(directory, 'mine.mjs'),
      `export const scenarios = [${JSON.stringify({
        name: 'slow-tickets',
        title: 'a ticket service that fails a third of its calls',
        description: 'A third of the calls fail before doing anything, as a service answering 503 would.',
        tools: { failRate: 0.3 },
        arrivalMs: 200,
        minimum: 'clean',
        goals: ['duplicates', 'typed'],
      })}];\n`,
    );
    const support = fileURLToPath(new URL('../../../../../examples/support.yaml', import.meta.url));
    const outcome = await keel(
      'chaos',
      support,
      '--scenarios',
      'tool-timeout-recall,slow-tickets',
      '--scenarios-file',
      './mine.mjs',
      '--runs',
      '6',
      '--json',
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const report = JSON.parse(outcome.stdout);
    expect(report.scenarios.map((scenario: { name: string }) => scenario.name)).toEqual([
      'tool-timeout-recall',
      'slow-tickets',
    ]);
    const [recall, mine] = report.scorecards;
    expect(recall).toMatchObject({ runs: 6, completed: 6, duplicateSideEffects: 0, untyped: 0, hung: 0 });
    expect(recall.sideEffectExecutions).toBeGreaterThanOrEqual(6);
    expect(mine).toMatchObject({ scenario: 'slow-tickets', runs: 6, duplicateSideEffects: 0 });
    const bad = await keel('chaos', support, '--scenarios-file', './absent.mjs');
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('Could not load the scenarios module ./absent.mjs');
  });

  it('runs the agent file nested (a parent calling it as a tool) and resumes a killed worker mid-child: no ticket twice', async () => {
    const support = fileURLToPath(new URL('../../../../../examples/support.yaml', import.meta.url));
    const outcome = await keel('chaos', support, '--scenarios', 'nested-crash', '--runs', '8', '--json');
    expect(outcome.code, outcome.stderr).toBe(0);
    const report = JSON.parse(outcome.stdout);
    expect(report.subjects[0].nestedCalibration).toMatchObject({ requestsPerRun: 4 });
    const [card] = report.scorecards;
    expect(card.skipped).toBeUndefined();
    // Every run resumed after the kill ends complete, its child's ticket opened once.
    expect(card).toMatchObject({ scenario: 'nested-crash', runs: 8, completed: 8, untyped: 0, hung: 0 });
    expect(card.duplicateSideEffects).toBe(0);
    expect(card.sideEffectExecutions).toBeGreaterThanOrEqual(8);
    expect(card.childErrors).toEqual({ typed: 0, untyped: 0 });
  });

  it('explains its options with --help and refuses bad ones with exit code 2', async () => {
    const help = await keel('chaos', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'keel chaos <agent.yaml> [--scenarios a,b] [--scenarios-file FILE] [--runs N]',
    );
    expect(help.stdout).toMatch(/outage-no-fallback\s+primary outage, no fallback/);
    const unknown = await keel('chaos', example, '--scenarios', 'transient-50');
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('config.invalid: Unknown chaos scenario "transient-50"');
    expect((await keel('chaos', example, '--runs', '0')).stderr).toContain(
      '--runs must be an integer from 1 to 10000',
    );
  });
});

describe('what keel chaos builds', () => {
  it('maps an agent file to the same agent options keel run uses', () => {
    const file = parseAgentFile(
      'name: w\ninstructions: Be brief.\nlimits: { maxTurns: 4 }\nretry: { maxAttempts: 2 }\ntools: [get_weather]\n',
      'w.yaml',
      ['get_weather'],
    );
    const parts = { model: {} as never, fallbacks: [], tools: [], store: {} as never };
    expect(agentOptionsFromFile(file, parts)).toEqual({
      name: 'w',
      instructions: 'Be brief.',
      limits: { maxTurns: 4 },
      retry: { maxAttempts: 2 },
      ...parts,
    });
    expect(agentOptionsFromFile(file, { ...parts, durability: { owner: 'o' } })).toMatchObject({
      durability: { owner: 'o' },
    });
    // pace: true paces locally under keel run, and through the fleet's shared windows under keel worker.
    const paced = parseAgentFile('name: w\npace: true\n', 'agent.yaml', []);
    expect(agentOptionsFromFile(paced, parts).pace).toBe(true);
    const paceStore = {} as never;
    const policies = { paceStore } as never;
    expect(agentOptionsFromFile(paced, { ...parts, policies }).pace).toEqual({ store: paceStore });
  });

  it('asks for the weather and a ticket when the agent has those tools, else a plain question', () => {
    expect(defaultChaosTask(['get_weather', 'calculator'])).toBe('What is the weather in Paris?');
    expect(defaultChaosTask(['create_ticket', 'get_weather'])).toBe(
      'Open a ticket titled Paris trip with low priority. What is the weather in Paris?',
    );
    expect(defaultChaosTask([])).toBe('Say hello in one sentence.');
  });
});
