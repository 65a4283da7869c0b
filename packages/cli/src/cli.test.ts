import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { type KeelOutcome, keelBinary } from './test-support/keel-cli.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

writeFileSync(
  join(directory, 'weather.yaml'),
  [
    'name: weather',
    'model: { provider: simulated, name: sim-primary, faults: "sequence=invalid_tool_arguments>overloaded" }',
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
writeFileSync(join(directory, 'broken.yaml'), 'name: broken\nlimits:\n  maxTurns: lots\n');

type Outcome = KeelOutcome;

async function keel(...args: string[]): Promise<Outcome> {
  return keelIn({ cwd: directory }, ...args);
}

async function keelIn(options: { cwd: string; unprivileged?: boolean }, ...args: string[]): Promise<Outcome> {
  return keelBinary(options, ...args);
}

describe('keel (the binary)', () => {
  it('runs an agent file offline: corrects a broken tool call, falls back on overload, reports it all', async () => {
    const outcome = await keel('run', 'weather.yaml', 'Weather in Paris and in Oslo?', '--json');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const result = JSON.parse(outcome.stdout);
    expect(result.status).toBe('completed');
    expect(result.report.corrections.byKind).toEqual({ malformed_json: 1 });
    expect(result.report.fallbacks.used).toEqual([
      expect.objectContaining({
        from: 'simulated/sim-primary',
        to: 'simulated/sim-fallback',
        errorCode: 'provider.overloaded',
      }),
    ]);
    expect(result.report.toolCalls.byTool).toEqual({ get_weather: 2 });
    expect(result.output).toMatch(/Paris/);
    expect(result.output).toMatch(/Oslo/);
  });

  it('prints events live and the report', async () => {
    const outcome = await keel('run', 'weather.yaml', 'Weather in Paris?');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/correction \(malformed_json\)/);
    expect(outcome.stdout).toMatch(
      /fallback simulated\/sim-primary → simulated\/sim-fallback after provider\.overloaded/,
    );
    expect(outcome.stdout).toMatch(/^report {3}steps/m);
    expect(outcome.stdout).toMatch(/run id [0-9a-f-]{36} · not resumable/);
  });

  it('interrupts for approval, resumes with --approve, and opens the ticket exactly once', async () => {
    const first = await keel(
      'run',
      'support.yaml',
      'Open an urgent ticket: the printer is on fire',
      '--json',
    );
    expect(first.code).toBe(3);
    const interrupted = JSON.parse(first.stdout);
    expect(interrupted).toMatchObject({ status: 'interrupted', resumable: true });
    const [pending] = interrupted.pending;
    expect(pending).toMatchObject({
      kind: 'approval',
      toolName: 'create_ticket',
      arguments: { priority: 'urgent' },
    });

    const listed = await keel('runs', 'list', '--status', 'interrupted', '--json');
    expect(JSON.parse(listed.stdout).map((run: { runId: string }) => run.runId)).toContain(interrupted.runId);

    const resumed = await keel('resume', interrupted.runId, '--approve', pending.idempotencyKey, '--json');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).status).toBe('completed');
    const again = await keel('resume', interrupted.runId, '--json');
    expect(JSON.parse(again.stdout).status).toBe('completed');

    const tickets = readFileSync(join(directory, '.keel', 'outbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((ticket) => ticket.idempotencyKey === pending.idempotencyKey);
    expect(tickets).toHaveLength(1);

    const shown = await keel('runs', 'show', interrupted.runId);
    expect(shown.stdout).toMatch(/status {3}completed/);
    expect(shown.stdout).toMatch(new RegExp(`create_ticket +completed +${pending.idempotencyKey}`));
  });

  it('sends a rejection to the model as a tool error with the reason', async () => {
    const first = JSON.parse(
      (await keel('run', 'support.yaml', 'Open an urgent ticket: no coffee', '--json')).stdout,
    );
    const key = first.pending[0].idempotencyKey;
    const resumed = JSON.parse(
      (await keel('resume', first.runId, '--reject', `${key}=not urgent`, '--json')).stdout,
    );
    expect(resumed.status).toBe('completed');
    const toolMessage = resumed.messages.find((message: { role: string }) => message.role === 'tool');
    expect(toolMessage.content).toMatch(/tool\.rejected/);
    expect(toolMessage.content).toMatch(/not urgent/);
  });

  it('cancels an interrupted run', async () => {
    const first = JSON.parse(
      (await keel('run', 'support.yaml', 'Open an urgent ticket: door stuck', '--json')).stdout,
    );
    const cancelled = await keel('cancel', first.runId);
    expect(cancelled.stdout).toMatch(/cancelled/);
    const shown = await keel('runs', 'show', first.runId, '--json');
    expect(JSON.parse(shown.stdout).run.status).toBe('cancelled');
    expect((await keel('cancel', first.runId)).stdout).toMatch(/already ended cancelled|cancelled/);
  });

  it.each([
    [
      ['run', 'broken.yaml', 'x'],
      2,
      /config\.invalid: .*broken\.yaml:3:13: limits\.maxTurns must be a positive integer/,
    ],
    [['run', 'missing.yaml', 'x'], 2, /config\.invalid: Cannot read agent file/],
    [['run', 'weather.yaml'], 2, /usage: keel run/],
    [['run', 'weather.yaml', ''], 2, /config\.invalid: The task is empty/],
    [['run', 'weather.yaml', ' \n\t '], 2, /config\.invalid: The task is empty/],
    [['run', 'weather.yaml', 'x', '--allow-key-host', 'http://x/'], 2, /--allow-key-host takes a host name/],
    [['run', 'weather.yaml', 'x', '--faults', 'meteor=1'], 2, /config\.invalid/],
    [['run', 'weather.yaml', 'x', '--seed', 'abc'], 2, /--seed must be an integer/],
    [['resume', 'no-such-run'], 1, /store\.not_found: No run no-such-run in this store/],
    [['runs', 'show', 'no-such-run'], 1, /store\.not_found/],
    [['frobnicate'], 2, /Unknown command "frobnicate"/],
    [['run', 'weather.yaml', 'x', '--colour'], 2, /Unknown option '--colour'/],
  ])('rejects %j with exit %i and a clear message', async (args, code, pattern) => {
    const outcome = await keel(...args);
    expect(outcome.code).toBe(code);
    expect(outcome.stderr).toMatch(pattern);
    expect(outcome.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('keel run examples/files.yaml (an MCP server, offline)', () => {
  const example = fileURLToPath(new URL('../../../examples/files.yaml', import.meta.url));
  const examples = join(example, '..');
  const serverBin = createRequire(import.meta.url).resolve(
    '@modelcontextprotocol/server-filesystem/dist/index.js',
  );
  /** Processes running server-filesystem on the examples folder. */
  const exampleServers = (): number[] =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return (
            readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(serverBin) &&
            readlinkSync(`/proc/${pid}/cwd`) === examples
          );
        } catch {
          return false;
        }
      })
      .map(Number);

  it('lists the examples folder through server-filesystem, and leaves no server process behind', async () => {
    const outcome = await keel('run', example, 'What files are in the examples folder?', '--allow-programs');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('tools mcp files (@modelcontextprotocol/server-filesystem .)');
    expect(outcome.stdout).toMatch(/step 1 {2}✓ tool list_directory/);
    expect(outcome.stdout).toContain('completed (stop reason: final_answer)');
    // The answer quotes the listing's start (the simulated model shortens long tool results).
    for (const name of ['ai-sdk-model.ts', 'files.yaml']) expect(outcome.stdout).toContain(name);
    expect(exampleServers()).toEqual([]);
  });

  it('offers only the read-only tools the file includes', async () => {
    const outcome = await keel('run', example, 'Write a file named notes.txt', '--allow-programs', '--json');
    const result = JSON.parse(outcome.stdout);
    expect(result.status).toBe('completed');
    expect(Object.keys(result.report.toolCalls.byTool)).not.toContain('write_file');
    expect(existsSync(join(examples, 'notes.txt'))).toBe(false);
  });
});

describe('keel resume and keel runs, against the store as it is on disk', () => {
  async function interruptedRun(cwd = directory): Promise<{ runId: string; key: string }> {
    const outcome = await keelIn(
      { cwd },
      'run',
      join(directory, 'support.yaml'),
      'Open an urgent ticket: no coffee',
      '--json',
    );
    const result = JSON.parse(outcome.stdout);
    return { runId: result.runId, key: result.pending[0].idempotencyKey };
  }

  it('takes an absolute --agent path, from another directory', async () => {
    const { runId, key } = await interruptedRun();
    const elsewhere = mkdtempSync(join(tmpdir(), 'keel-elsewhere-'));
    try {
      const resumed = await keelIn(
        { cwd: elsewhere },
        'resume',
        runId,
        '--agent',
        join(directory, 'support.yaml'),
        '--store',
        join(directory, '.keel', 'keel.db'),
        '--approve',
        key,
        '--json',
      );
      expect(resumed.stderr).toBe('');
      expect(JSON.parse(resumed.stdout).status).toBe('completed');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('says in words when the lease of a run held by another process ends, and how to wait for it', async () => {
    const { runId } = await interruptedRun();
    const store = new SqliteRunStore(join(directory, '.keel', 'keel.db'));
    await store.acquireLease(runId, 'worker-that-died', 30_000, Date.now());
    await store.close();
    const outcome = await keel('resume', runId);
    expect(outcome.code).toBe(1);
    const held = new RegExp(
      `store\\.conflict: Run ${runId} is held by another process \\(lease owner worker-that-died\\); its lease ends in (\\d+) s, at \\d\\d:\\d\\d:\\d\\d`,
    ).exec(outcome.stderr);
    expect(held, outcome.stderr).not.toBeNull();
    // The child process starts while the 30 s lease runs down: on a loaded machine that takes a few seconds.
    expect(Number(held?.[1])).toBeGreaterThan(10);
    expect(Number(held?.[1])).toBeLessThanOrEqual(30);
    expect(outcome.stderr).toMatch(new RegExp(`keel resume ${runId} --wait`));
    expect(outcome.stderr).not.toMatch(/until \d{13}/);
  });

  it('lists and shows runs from a store it may not write (read-only file and directory)', async () => {
    const { runId } = await interruptedRun();
    const readOnly = mkdtempSync(join(tmpdir(), 'keel-read-only-'));
    cpSync(join(directory, '.keel'), join(readOnly, '.keel'), { recursive: true });
    chmodSync(join(readOnly, '.keel', 'keel.db'), 0o444);
    chmodSync(join(readOnly, '.keel'), 0o555);
    chmodSync(readOnly, 0o555);
    try {
      const listed = await keelIn({ cwd: readOnly, unprivileged: true }, 'runs', 'list', '--json');
      expect(listed.stderr).toBe('');
      expect(JSON.parse(listed.stdout).map((run: { runId: string }) => run.runId)).toContain(runId);
      const shown = await keelIn({ cwd: readOnly, unprivileged: true }, 'runs', 'show', runId);
      expect(shown.stdout).toMatch(/status {3}interrupted/);
      const text = await keelIn({ cwd: readOnly, unprivileged: true }, 'runs', 'list');
      expect(text.stdout).toContain(runId);
    } finally {
      chmodSync(readOnly, 0o755);
      chmodSync(join(readOnly, '.keel'), 0o755);
      rmSync(readOnly, { recursive: true, force: true });
    }
  });

  it('lists no runs in a directory with no store, and creates none', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'keel-empty-'));
    try {
      const listed = await keelIn({ cwd: empty }, 'runs', 'list');
      expect(listed.stdout).toMatch(/No runs yet/);
      expect(JSON.parse((await keelIn({ cwd: empty }, 'runs', 'list', '--json')).stdout)).toEqual([]);
      expect((await keelIn({ cwd: empty }, 'runs', 'show', 'x')).stderr).toMatch(/store\.not_found/);
      expect(existsSync(join(empty, '.keel'))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('reports a damaged store as store.invalid, with guidance, for every command', async () => {
    const damaged = join(directory, 'damaged.db');
    writeFileSync(damaged, 'this is not a database '.repeat(100));
    for (const args of [
      ['runs', 'list'],
      ['runs', 'show', 'x'],
      ['run', 'weather.yaml', 'x'],
      ['cancel', 'x'],
    ]) {
      const outcome = await keel(...args, '--store', damaged);
      expect(outcome.code, args.join(' ')).toBe(1);
      expect(outcome.stderr).toMatch(
        /^store\.invalid: The SQLite run store .*damaged\.db is damaged or not a SQLite database/,
      );
      expect(outcome.stderr).toMatch(/guidance: Move .*damaged\.db aside/);
    }
  });
});
