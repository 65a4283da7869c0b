// `keel chaos` as users run it: the built binary in a child process, on the example agent file, offline. The crash
// scenario kills a real worker process with SIGKILL and resumes its runs from the SQLite store in another.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { agentOptionsFromFile } from './agent-options.js';
import { parseAgentFile } from './agent-file.js';
import { defaultChaosTask } from './chaos-subject.js';

const binary = fileURLToPath(new URL('../bin/keel.js', import.meta.url));
const example = fileURLToPath(new URL('../../../examples/weather.yaml', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-chaos-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function keel(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [binary, ...args], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('keel chaos (the binary)', () => {
  it('scores examples/weather.yaml: progress on stderr, the table on stdout, an HTML report; a worker killed and resumed', async () => {
    expect(
      existsSync(binary.replace('bin/keel.js', 'dist/main.js')),
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
    expect(lines[0]).toMatch(/^scenario\s+completed\s+req\/completed\s+vs minimum\s+while down\s+p50\s+p99/);
    expect(lines[2]).toMatch(/^transient-10\s+100\.0%/);
    expect(lines[3]).toMatch(/^crash\s+100\.0%\s+[\d.]+\s+[\d.]+x\s+0\s+.*\s+0\s+0\/0\s+-\s+ok$/);
    expect(outcome.stdout).toContain('task: What is the weather in Paris?');
    expect(outcome.stdout).toContain('every goal that applies was met');
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
      'duplicates',
      'typed',
    ]);
  });

  it('explains its options with --help and refuses bad ones with exit code 2', async () => {
    const help = await keel('chaos', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('keel chaos <agent.yaml> [--scenarios a,b] [--runs N] [--seed N]');
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
  });

  it('asks for the weather and a ticket when the agent has those tools, else a plain question', () => {
    expect(defaultChaosTask(['get_weather', 'calculator'])).toBe('What is the weather in Paris?');
    expect(defaultChaosTask(['create_ticket', 'get_weather'])).toBe(
      'Open a ticket titled Paris trip with low priority. What is the weather in Paris?',
    );
    expect(defaultChaosTask([])).toBe('Say hello in one sentence.');
  });
});
