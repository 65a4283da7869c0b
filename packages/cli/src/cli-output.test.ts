// What a newcomer sees from the `keel` binary: the start line's faults, a reader that leaves early, a failed run
// shown, a resume of an unknown run, a run that waits, an unreadable store. The built binary runs as a child
// process in a scratch directory with its own SQLite store; agent files turn retries' waits off.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const binary = fileURLToPath(new URL('../bin/keel.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-cli-output-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

writeFileSync(
  join(directory, 'faulty.yaml'),
  [
    'name: faulty',
    'model: { provider: simulated, name: sim-primary, faults: "sequence=server_error" }',
    'fallbacks: [simulated:sim-fallback]',
    'tools: [get_weather]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'model: simulated:sim-primary',
    'tools: [create_ticket]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function keel(...args: string[]): Promise<Outcome> {
  return keelIn(directory, ...args);
}

async function keelIn(cwd: string, ...args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [binary, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** Runs `keel` with its stdout closed by the reader before anything is written (`| head -0`): exit code and stderr. */
function keelWithClosedStdout(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binary, ...args], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('keel run and keel chat, at the start', () => {
  it("say which faults apply: the agent file's own, not none", async () => {
    const outcome = await keel('run', 'faulty.yaml', 'Weather in Paris?');
    expect(outcome.stdout).toContain(
      'offline simulated provider · faults sim-primary sequence=server_error (agent file) · seed 1',
    );
    expect(outcome.stdout).not.toContain('faults none');
    const both = await keel('run', 'faulty.yaml', 'Weather in Paris?', '--faults', 'demo', '--seed', '3');
    expect(both.stdout).toContain(
      'faults sim-primary sequence=server_error (agent file) · demo (--faults) for the other models · seed 3',
    );
    const none = await keel('run', 'support.yaml', 'Weather in Paris?');
    expect(none.stdout).toContain('offline simulated provider · faults none · seed 1');
  });
});

describe('a reader that leaves early', () => {
  it('ends keel runs list quietly, with no EPIPE stack trace', async () => {
    await keel('run', 'support.yaml', 'Hello');
    const outcome = await keelWithClosedStdout('runs', 'list');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
  });

  it('ends keel run --log json quietly: the run is cancelled, nothing is printed on stderr', async () => {
    const outcome = await keelWithClosedStdout('run', 'faulty.yaml', 'Weather in Paris?', '--log', 'json');
    expect(outcome.stderr).toBe('');
    expect([0, 130]).toContain(outcome.code);
  });
});
