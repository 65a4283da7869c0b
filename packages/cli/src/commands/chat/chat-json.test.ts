// `keel chat --json` and `keel sessions` as machines use them: the built binary as a child process, its messages and
// answers piped in, one JSON object per line out.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const binary = fileURLToPath(new URL('../../../bin/keel.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-chat-json-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'model: simulated:sim-primary',
    'tools: [create_ticket, get_weather]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

writeFileSync(
  join(directory, 'stuck.yaml'),
  [
    'name: stuck',
    'model: { provider: simulated, name: sim-primary, faults: "sequence=hang" }',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

/** Runs `keel` with `input` on its stdin (then closed); its exit code and output. */
function keel(
  args: string[],
  input = '',
  environment: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binary, ...args], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1', ...environment },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** The JSON lines of a chat's output. */
function linesOf(stdout: string): Array<Record<string, unknown> & { type: string }> {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('keel chat --json', () => {
  it('writes one JSON line per event and answer, and reads decisions as lines', async () => {
    const outcome = await keel(
      ['chat', 'support.yaml', '--json', '--session', 'json-1'],
      'Weather in Paris?\nOpen an urgent ticket: the server is down\ny\n',
    );
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const lines = linesOf(outcome.stdout);
    expect(lines[0]).toEqual({
      type: 'chat-session',
      sessionId: 'json-1',
      agentName: 'support',
      models: 'simulated/sim-primary',
      simulated: { faults: 'none', seed: 1 },
      turns: 0,
      version: 0,
      comeBack: 'keel chat support.yaml --session json-1',
    });
    expect(lines.map((line) => line.type)).toEqual(
      expect.arrayContaining(['run-start', 'tool-call-end', 'text-delta', 'chat-decisions', 'run-resumed']),
    );
    const answers = lines.filter((line) => line.type === 'chat-answer');
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatchObject({ status: 'completed', session: { outcome: 'saved', version: 1 } });
    expect(answers[0]).not.toHaveProperty('messages');
    expect(answers[1]).toMatchObject({
      status: 'completed',
      output: expect.stringMatching(/T-[0-9a-f]{8}/),
      session: { sessionId: 'json-1', outcome: 'saved', version: 2 },
    });
    const decisions = lines.find((line) => line.type === 'chat-decisions');
    expect(decisions?.pending).toEqual([
      expect.objectContaining({
        kind: 'approval',
        toolName: 'create_ticket',
        arguments: expect.objectContaining({ priority: 'urgent' }),
      }),
    ]);
    expect(lines.at(-1)).toEqual({
      type: 'chat-end',
      sessionId: 'json-1',
      comeBack: 'keel chat support.yaml --session json-1',
    });
  }, 60_000);

  it('never writes an API key of its environment, even streamed in pieces', async () => {
    const secret = 'sk-chat-test-0123456789abcdefghij';
    for (const json of [true, false]) {
      const outcome = await keel(
        ['chat', 'support.yaml', '--session', `secret-${json}`, ...(json ? ['--json'] : [])],
        `Remember this: ${secret}\n`,
        { KEEL_CHAT_TEST_API_KEY: secret },
      );
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).not.toContain(secret);
      expect(outcome.stdout).not.toContain(secret.slice(0, 20));
      expect(outcome.stdout).toContain('[redacted]');
      if (json) {
        const deltas = linesOf(outcome.stdout).filter((line) => line.type === 'text-delta');
        expect(deltas.length).toBeGreaterThan(1);
        expect(deltas.map((line) => line.delta).join('')).toMatch(/Remember this: \[redacted\]/);
      }
    }
  }, 60_000);

  it('leaves a run waiting for approval when the input ends, and goes on with it in the next chat', async () => {
    const left = linesOf(
      (
        await keel(
          ['chat', 'support.yaml', '--json', '--session', 'json-2'],
          'Open an urgent ticket: no heating\n',
        )
      ).stdout,
    );
    const waiting = left.find((line) => line.type === 'chat-decisions');
    expect(left.find((line) => line.type === 'chat-notice')?.message).toMatch(/waits and holds the session/);
    expect(left.some((line) => line.type === 'chat-answer')).toBe(false);

    // The session is held: it cannot be deleted without --force.
    const refused = await keel(['sessions', 'delete', 'json-2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /store\.conflict: Session json-2 is held by run [0-9a-f-]{36} \(interrupted\)/,
    );
    expect(refused.stderr).toMatch(/guidance: Cancel the run first/);

    const back = linesOf(
      (await keel(['chat', 'support.yaml', '--json', '--session', 'json-2'], 'n too expensive\n')).stdout,
    );
    expect(back.find((line) => line.type === 'chat-notice')?.message).toMatch(
      /the session's last run [0-9a-f-]{36} waits for decisions: going on with it/,
    );
    expect(back.find((line) => line.type === 'chat-decisions')?.runId).toBe(waiting?.runId);
    const answer = back.find((line) => line.type === 'chat-answer');
    expect(answer).toMatchObject({
      runId: waiting?.runId,
      status: 'completed',
      session: { outcome: 'saved', version: 1 },
    });
    expect(answer?.output).toMatch(/too expensive/);
  }, 60_000);

  it('writes a chat-waiting line while a model call sends nothing', async () => {
    const child = spawn(process.execPath, [binary, 'chat', 'stuck.yaml', '--json', '--session', 'stuck-1'], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1' },
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const waiting = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let buffer = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          for (const line of buffer.split('\n').slice(0, -1)) {
            const value = JSON.parse(line);
            if (value.type === 'chat-waiting') resolve(value);
          }
        });
        child.on('close', () => reject(new Error(`the chat ended first; it wrote:\n${buffer}`)));
        child.stdin.write('Hello?\n');
      });
      expect(waiting).toMatchObject({ type: 'chat-waiting', model: 'simulated/sim-primary' });
      expect(waiting.waitedMs).toBeGreaterThanOrEqual(1_000);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  }, 60_000);
});

describe('keel sessions', () => {
  it('lists, shows and deletes sessions, as text and JSON', async () => {
    await keel(['chat', 'support.yaml', '--json', '--session', 'listed-1'], 'Weather in Oslo?\n');
    const listed = await keel(['sessions', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^SESSION ID +TURNS +MESSAGES +AGENT +UPDATED +HELD BY$/m);
    expect(listed.stdout).toMatch(/^listed-1 +1 +4 +support +\d{4}-\d\d-\d\dT[\d:.]+Z +-$/m);
    const json = JSON.parse((await keel(['sessions', 'list', '--json', '--limit', '1'])).stdout);
    expect(json).toHaveLength(1);

    const shown = await keel(['sessions', 'show', 'listed-1']);
    expect(shown.stdout).toMatch(/^session +listed-1$/m);
    expect(shown.stdout).toMatch(/^turns +1 \(4 messages\)$/m);
    expect(shown.stdout).toMatch(/^ {2}you +Weather in Oslo\?$/m);
    expect(shown.stdout).toMatch(/^ +→ get_weather \{"city":"Oslo"\}$/m);
    expect(shown.stdout).toMatch(/^ +← get_weather: \{"status":"success"/m);

    const deleted = await keel(['sessions', 'delete', 'listed-1', '--json']);
    expect(JSON.parse(deleted.stdout)).toEqual({ sessionId: 'listed-1', deleted: true });
    expect((await keel(['sessions', 'show', 'listed-1'])).stderr).toMatch(
      /store\.not_found: No session listed-1/,
    );
  }, 60_000);

  it.each([
    [['sessions', '--help'], 0, /usage:\n {2}keel sessions list/],
    [['chat', '--help'], 0, /usage: keel chat <agent\.yaml> \[--session ID\]/],
    [['sessions', 'show', 'bad id'], 2, /sessionId must be 1 to 128 characters/],
    [['sessions', 'show', 'no-such-session'], 1, /store\.not_found/],
    [['sessions', 'frobnicate'], 2, /usage:/],
    [['sessions', 'list', '--limit', '0'], 2, /--limit must be an integer of at least 1/],
    [['chat'], 2, /usage: keel chat <agent\.yaml>/],
    [['chat', 'support.yaml', '--session', '../x'], 2, /keel chat --session: sessionId must be/],
    [['chat', 'support.yaml', '--sesion', 'x'], 2, /Unknown option '--sesion'/],
  ])('answers %j with exit %i', async (args, code, pattern) => {
    const outcome = await keel(args);
    expect(outcome.code).toBe(code);
    expect(code === 0 ? outcome.stdout : outcome.stderr).toMatch(pattern);
  });
});
