// Process lifetime, output caps and resource limits, with real child processes. Time comes from a FakeClock; a test
// waits for real events (a file written, a process seen in /proc), never for a duration.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@keel/core/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callTool, isRunning, processesInGroup, rejection, stillRunningAfterWait } from '../test-support.js';
import { commandTool } from './command-tool.js';
import { limitWrapper } from './resource-limits.js';

const NOBODY = { uid: 65534, gid: 65534 };
const noInput = { type: 'object', properties: {} } as const;

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-process-')));
  // Readable and writable by the unprivileged user some tests run as.
  chmodSync(root, 0o777);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function script(text: string, extra: Record<string, unknown> = {}) {
  return commandTool({
    name: 'script',
    description: 'Runs a fixed script',
    input: noInput,
    command: ['sh', '-c', text],
    root,
    ...extra,
  });
}

/** Waits (polling real events, no fixed sleep) until `file` holds `lines` lines, and returns them. */
async function linesOf(file: string, lines: number): Promise<string[]> {
  return vi.waitFor(
    () => {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const found = text.split('\n').filter((line) => line !== '');
      if (found.length < lines) throw new Error(`${file} has ${found.length} lines`);
      return found;
    },
    { timeout: 10_000, interval: 10 },
  );
}

describe('commandTool: timeouts end the whole process group', () => {
  it('kills the program and its grandchildren with SIGTERM at the timeout, and reports partial output', async () => {
    const clock = new FakeClock();
    const tool = script('echo started; sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; wait', {
      clock,
      timeoutMs: 5_000,
    });
    const call = rejection(callTool(tool, {}));
    const pids = (await linesOf(join(root, 'pids'), 2)).map(Number);
    expect(pids.every(isRunning)).toBe(true);

    await clock.advance(5_000);
    const error = await call;

    expect(error.code).toBe('tool.timeout');
    expect(error.message).toBe('sh did not finish within 5000 ms; keel ended its process group');
    expect(error.data).toMatchObject({ timeoutMs: 5_000, stdout: 'started\n' });
    expect(await stillRunningAfterWait(() => pids.filter(isRunning))).toEqual([]);
  });

  it('escalates to SIGKILL after killGraceMs when the program ignores SIGTERM', async () => {
    const clock = new FakeClock();
    const tool = script('trap "" TERM; echo $$ > pids; while :; do :; done', {
      clock,
      timeoutMs: 1_000,
      killGraceMs: 3_000,
    });
    const call = rejection(callTool(tool, {}));
    const [pid] = (await linesOf(join(root, 'pids'), 1)).map(Number);

    await clock.advance(1_000);
    // SIGTERM was sent and ignored: the busy loop still runs until the grace has passed.
    expect(isRunning(pid!)).toBe(true);
    await clock.advance(3_000);
    const error = await call;

    expect(error.code).toBe('tool.timeout');
    expect(await stillRunningAfterWait(() => [pid!].filter(isRunning))).toEqual([]);
  });

  it('ends the group when the caller aborts, and rejects with the abort reason', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const tool = script('sleep 300 & echo $! > pids; wait', { clock });
    const call = callTool(tool, {}, controller.signal).catch((error: unknown) => error);
    const [pid] = (await linesOf(join(root, 'pids'), 1)).map(Number);

    const reason = new Error('run cancelled');
    controller.abort(reason);

    expect(await call).toBe(reason);
    expect(await stillRunningAfterWait(() => [pid!].filter(isRunning))).toEqual([]);
  });

  it('kills what the program left running in its group once it exits, instead of waiting for it', async () => {
    const output = await callTool(script('sleep 300 & echo $!'), {});
    const pid = Number(output.stdout.trim());
    expect(output.exitCode).toBe(0);
    expect(await stillRunningAfterWait(() => [pid].filter(isRunning))).toEqual([]);
  });
});

describe('commandTool: giant output', () => {
  it('keeps the first maxOutputBytes of stdout, reads the rest to the end, and says so', async () => {
    const tool = commandTool({
      name: 'numbers',
      description: 'Prints numbers',
      input: noInput,
      command: ['seq', '1', '2000000'],
      root,
      maxOutputBytes: 1_000,
    });
    const output = await callTool(tool, {});
    // seq 1 2000000 prints 14,888,896 bytes.
    expect(output.exitCode).toBe(0);
    expect(output.stdout.length).toBeLessThanOrEqual(1_000);
    expect(output.stdout.startsWith('1\n2\n3\n')).toBe(true);
    expect(output.notes).toEqual([
      'stdout was cut: showing the first 1000 of 14888896 bytes. Ask for less output (a filter, a range, a count) if you need the rest.',
    ]);
  });

  it('keeps the last maxOutputBytes of stderr, where the error that ended the program is', async () => {
    const error = await rejection(
      callTool(script('seq 1 100000 >&2; echo "fatal: the end" >&2; exit 3', { maxOutputBytes: 200 }), {}),
    );
    expect(error.code).toBe('tool.failed');
    const stderr = String(error.data.stderr);
    expect(stderr.length).toBeLessThanOrEqual(200);
    expect(stderr.endsWith('99999\n100000\nfatal: the end\n')).toBe(true);
    expect(error.data.notes).toEqual([expect.stringContaining('stderr was cut: showing the last 200 of')]);
  });

  it('never cuts a UTF-8 character in half', async () => {
    const output = await callTool(
      script('i=0; while [ $i -lt 200 ]; do printf "é"; i=$((i+1)); done', { maxOutputBytes: 101 }),
      {},
    );
    expect(output.stdout).toBe('é'.repeat(50));
  });
});

describe('commandTool: resource limits through prlimit', () => {
  it('applies CPU, open-file, memory and file-size limits to the program', async () => {
    const tool = script('ulimit -t; ulimit -n; ulimit -v; ulimit -f', {
      limits: { cpuSeconds: 7, openFiles: 32, memoryBytes: 512 * 1024 * 1024, fileSizeBytes: 1024 * 1024 },
    });
    const output = await callTool(tool, {});
    // sh reports memory in KiB and file size in 512-byte blocks.
    expect(output.stdout).toBe('7\n32\n524288\n2048\n');
  });

  it('holds a fork bomb at maxProcesses, then ends every process of it', async () => {
    const clock = new FakeClock();
    const limit = 24;
    // Each process starts two more, then waits on a sleep, so the bomb does not die out by itself. The leader writes
    // its pid (the group's id) and every error to files, where the test sees the kernel refuse forks mid-bomb.
    const tool = commandTool({
      name: 'bomb',
      description: 'A fork bomb',
      input: noInput,
      command: ['sh', '-c', 'echo $$ > leader; exec 2>>errors; f() { f & f & sleep 300; }; f'],
      root,
      user: NOBODY,
      limits: { maxProcesses: limit },
      clock,
      timeoutMs: 60_000,
    });
    const call = rejection(callTool(tool, {}));
    const [group] = (await linesOf(join(root, 'leader'), 1)).map(Number);
    await vi.waitFor(
      () => {
        const errors = existsSync(join(root, 'errors')) ? readFileSync(join(root, 'errors'), 'utf8') : '';
        if (!errors.includes('Cannot fork')) throw new Error('no fork refused yet');
      },
      { timeout: 15_000, interval: 20 },
    );
    // Zombies count against RLIMIT_NPROC too, so they are counted here. (Processes of the same user outside the
    // bomb count against the limit as well, and only make the bomb smaller.)
    expect(everyProcessOfGroup(group!).length).toBeLessThanOrEqual(limit);

    await clock.advance(60_000);
    const error = await call;

    // Either the timeout ended the group, or the leader's own fork was refused first and it exited (then keel killed
    // what it left): both fail the call, typed, and leave nothing behind.
    expect(['tool.timeout', 'tool.failed']).toContain(error.code);
    expect(await stillRunningAfterWait(() => processesInGroup(group!))).toEqual([]);
  });

  it('refuses maxProcesses for a command running as root: the kernel would not apply it', () => {
    const asRoot = () => limitWrapper({ maxProcesses: 10 }, 'commandTool "x"', true);
    expect(asRoot).toThrow(/does not bind a command running as root/);
  });

  it('refuses limits when prlimit is not installed, rather than run without them', () => {
    const missing = () => limitWrapper({ cpuSeconds: 1 }, 'commandTool "x"', false, () => false);
    expect(missing).toThrow(/limits need prlimit from util-linux/);
  });
});

/** Every process of the group `groupId`, zombies included. */
function everyProcessOfGroup(groupId: number): number[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  return all.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === groupId;
    } catch {
      return false;
    }
  });
}
