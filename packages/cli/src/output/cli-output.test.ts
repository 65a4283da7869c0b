// What a newcomer sees from the `keel` binary: the start line's faults, a reader that leaves early, a failed run
// shown, a resume of an unknown run, a run that waits, an unreadable store. The built binary runs as a child
// process in a scratch directory with its own SQLite store; agent files turn retries' waits off.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEEL_BINARY, type KeelOutcome, keelBinary } from '../test-support/keel-cli.js';

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

writeFileSync(
  join(directory, 'overflow.yaml'),
  [
    'name: overflow',
    'model: { provider: simulated, name: sim-primary, faults: "context_overflow=1" }',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

// The same agent twice: its model hangs in the first (the run holds its lease, waiting), answers in the second.
writeFileSync(
  join(directory, 'hang.yaml'),
  [
    'name: lease',
    'model: { provider: simulated, name: sim-primary, faults: "sequence=hang" }',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'answer.yaml'),
  ['name: lease', 'model: simulated:sim-primary', 'retry: { maxAttempts: 1 }'].join('\n'),
);

type Outcome = KeelOutcome;

async function keel(...args: string[]): Promise<Outcome> {
  return keelIn(directory, ...args);
}

async function keelIn(cwd: string, ...args: string[]): Promise<Outcome> {
  return keelBinary({ cwd }, ...args);
}

/** Runs `keel` with its stdout closed by the reader before anything is written (`| head -0`): exit code and stderr. */
function keelWithClosedStdout(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KEEL_BINARY, ...args], {
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

/** The run id of the newest run with `status`, as keel runs list --json gives it. */
async function newestRun(status: string): Promise<string> {
  const listed = await keel('runs', 'list', '--status', status, '--json');
  return JSON.parse(listed.stdout)[0].runId;
}

describe('keel runs show', () => {
  it('shows a failed run with its task, stop reason, error code, message and guidance (text and --json)', async () => {
    expect((await keel('run', 'overflow.yaml', 'Summarise the manual')).code).toBe(1);
    const runId = await newestRun('failed');
    const text = await keel('runs', 'show', runId);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^status {3}failed {3}stop reason model_error/m);
    expect(text.stdout).toMatch(/^task {5}Summarise the manual$/m);
    expect(text.stdout).toMatch(/^error {4}provider\.context_overflow: /m);
    expect(text.stdout).toMatch(/^guidance The request is larger than the model accepts/m);
    const json = JSON.parse((await keel('runs', 'show', runId, '--json')).stdout);
    expect(json).toMatchObject({
      task: 'Summarise the manual',
      stopReason: 'model_error',
      error: {
        code: 'provider.context_overflow',
        guidance: expect.stringContaining('shorten the conversation'),
      },
      output: null,
      pending: [],
      run: { runId, status: 'failed' },
    });
  });

  it("shows a completed run's output", async () => {
    expect((await keel('run', 'support.yaml', 'Hello there')).code).toBe(0);
    const runId = await newestRun('completed');
    const text = await keel('runs', 'show', runId);
    expect(text.stdout).toMatch(/^output\n.+/m);
    // The simulated model is priced as gpt-4.1-mini: a short run costs a fraction of a cent.
    expect(text.stdout).toMatch(
      /^cost {5}\$0\.\d{6} \(simulated\/\S+ \$0\.\d{6}\) · tokens in \d+ out \d+$/m,
    );
    const json = JSON.parse((await keel('runs', 'show', runId, '--json')).stdout);
    expect(json).toMatchObject({ task: 'Hello there', stopReason: 'final_answer', error: null });
    expect(json.cost.totalUsd).toBeGreaterThan(0);
    expect(typeof json.output).toBe('string');
  });
});

describe('keel resume', () => {
  it('of an id the store does not hold fails with store.not_found', async () => {
    const outcome = await keel('resume', 'no-such-run');
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^store\.not_found: No run no-such-run in this store$/m);
    expect(outcome.stderr).toMatch(/^guidance: Check the id \(keel runs list shows the runs\)/m);
  });
});

describe('a run that waits for approval', () => {
  it('is shown waiting, with the command that answers it, not as an error', async () => {
    const outcome = await keel('run', 'support.yaml', 'Open an urgent ticket: the printer is on fire');
    expect(outcome.code).toBe(3);
    expect(outcome.stdout).not.toContain('run.interrupted');
    expect(outcome.stdout).not.toMatch(/^errors /m);
    expect(outcome.stdout).toMatch(
      /^waiting {2}for a decision:\n {2}create_ticket \{.*"priority":"urgent"\} needs approval {2}\(key (\S+)\)$/m,
    );
    const runId = /run ([0-9a-f-]{36})/.exec(outcome.stdout)![1]!;
    const key = `${runId}:1:0`;
    expect(outcome.stdout).toContain(
      `answer   keel resume ${runId} --approve ${key} (or --reject ${key}=reason)`,
    );
    const shown = await keel('runs', 'show', runId);
    expect(shown.stdout).not.toContain('run.interrupted');
    expect(shown.stdout).toContain(`answer   keel resume ${runId} --approve ${key}`);
    const json = JSON.parse((await keel('runs', 'show', runId, '--json')).stdout);
    expect(json.pending).toMatchObject([
      { kind: 'approval', idempotencyKey: key, toolName: 'create_ticket' },
    ]);
  });
});

async function keelAs(options: { cwd: string; unprivileged: boolean }, ...args: string[]): Promise<Outcome> {
  return keelBinary(options, ...args);
}

describe('a store that cannot be read', () => {
  it('is a typed error, not "No runs yet": a .keel of mode 000, and a .keel that is a file', async () => {
    const locked = mkdtempSync(join(tmpdir(), 'keel-locked-'));
    const file = mkdtempSync(join(tmpdir(), 'keel-not-a-directory-'));
    try {
      mkdirSync(join(locked, '.keel'));
      writeFileSync(join(locked, '.keel', 'keel.db'), '');
      chmodSync(join(locked, '.keel'), 0o000);
      chmodSync(locked, 0o755);
      writeFileSync(join(file, '.keel'), 'not a directory');
      for (const cwd of [locked, file]) {
        for (const json of [[], ['--json']]) {
          const outcome = await keelAs({ cwd, unprivileged: true }, 'runs', 'list', ...json);
          expect(outcome.stdout).toBe('');
          expect(outcome.stderr).toMatch(
            /^store\.unavailable: Cannot read the run store at \S+keel\.db: E(ACCES|NOTDIR)/m,
          );
          expect(outcome.code).toBe(1);
        }
        expect((await keelAs({ cwd, unprivileged: true }, 'runs', 'show', 'some-run')).stderr).toMatch(
          /^store\.unavailable: /m,
        );
      }
    } finally {
      chmodSync(join(locked, '.keel'), 0o755);
      rmSync(locked, { recursive: true, force: true });
      rmSync(file, { recursive: true, force: true });
    }
  });
});

describe('keel resume after the process that held the run was killed', () => {
  it('takes over at once a lease whose holder, a process of this host, is gone (SIGKILL)', async () => {
    const child = spawn(process.execPath, [KEEL_BINARY, 'run', 'hang.yaml', 'Say hello'], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    try {
      // The run holds its lease once its model call hangs (the store lists it running with a lease).
      let runId: string | undefined;
      const deadline = Date.now() + 30_000;
      while (runId === undefined) {
        if (Date.now() > deadline) throw new Error(`the run never started; it printed:\n${stdout}`);
        const id = /run ([0-9a-f-]{36})/.exec(stdout)?.[1];
        if (id !== undefined) {
          const listed = JSON.parse((await keel('runs', 'list', '--status', 'running', '--json')).stdout);
          if (listed.some((run: { runId: string; lease?: unknown }) => run.runId === id && run.lease))
            runId = id;
        }
        if (runId === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const listed = JSON.parse((await keel('runs', 'list', '--json')).stdout);
      const holder: string = listed.find((run: { runId: string }) => run.runId === runId).lease.owner;
      expect(holder).toMatch(new RegExp(`:${child.pid}:`));
      child.kill('SIGKILL');
      await exited;

      const resumed = await keel('resume', runId, '--agent', 'answer.yaml', '--json');
      expect(resumed.stderr).toContain(`its lease holder (process ${child.pid} of this host) is gone`);
      expect(resumed.stderr).not.toContain('store.conflict');
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ runId, status: 'completed' });
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
