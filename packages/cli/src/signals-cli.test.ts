// `keel run` ended by a signal while a command tool runs and a real MCP server (server-filesystem, over stdio) is
// connected: SIGTERM and SIGHUP cancel the run as Ctrl-C does (exit 130), and SIGKILL, which keel cannot catch,
// leaves nothing either: the lifeline's watchdog kills what keel started. Every process keel started (the server, the
// command, the watchdog) is checked by pid, polled within a bound.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const binary = fileURLToPath(new URL('../bin/keel.js', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-signals-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

writeFileSync(
  join(directory, 'hang.yaml'),
  [
    'name: hang',
    'model: simulated:sim-primary',
    'tools:',
    '  - mcp:',
    '      package: "@modelcontextprotocol/server-filesystem"',
    '      args: ["."]',
    '      include: [list_allowed_directories]',
    '  - command:',
    '      name: wait_forever',
    '      description: Waits forever',
    '      input: { type: object, properties: {} }',
    `      argv: [${JSON.stringify(process.execPath)}, -e, "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)", "{file}"]`,
    '      timeoutMs: 600000',
    'limits: { timeoutMs: 600000 }',
  ]
    .join('\n')
    .replace('properties: {} }', 'properties: { file: { type: string } }, required: [file] }'),
);

/** Whether a process with this id runs (a zombie, dead but not yet reaped, does not count). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The processes whose parent is `parent`, with their command lines. */
function childrenOf(parent: number): { pid: number; command: string }[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid !== parent) return [];
        return [
          {
            pid: Number(entry),
            command: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '),
          },
        ];
      } catch {
        return [];
      }
    });
}

/** Polls `condition` every 50 ms, at most `timeoutMs`; resolves with its last value. */
async function poll<T>(condition: () => T, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = condition();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = condition();
  }
  return value;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('keel run ended by a signal leaves no program running', () => {
  it.each(['SIGTERM', 'SIGHUP', 'SIGKILL'] as const)(
    '%s while a command tool runs and an MCP server is connected',
    async (signal) => {
      const pidFile = join(directory, `${signal}.pid`);
      const keel = spawn(
        process.execPath,
        [
          binary,
          'run',
          'hang.yaml',
          `Wait forever, writing to ${pidFile}`,
          '--allow-programs',
          '--store',
          join(directory, `${signal}.db`),
        ],
        { cwd: directory, env: { PATH: process.env.PATH, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let printed = '';
      keel.stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString('utf8');
      });
      keel.stderr.on('data', (chunk: Buffer) => {
        printed += chunk.toString('utf8');
      });
      const ended = exited(keel);
      expect(await poll(() => existsSync(pidFile), Boolean, 30_000), printed).toBe(true);
      const commandPid = Number(readFileSync(pidFile, 'utf8'));
      const started = childrenOf(keel.pid!);
      // The server and the command (and the lifeline's watchdog: every child of keel is checked).
      expect(started.some((child) => child.command.includes('server-filesystem'))).toBe(true);
      expect(started.map((child) => child.pid)).toContain(commandPid);
      expect(started.every((child) => isAlive(child.pid))).toBe(true);

      keel.kill(signal);
      const { code, signal: endedBy } = await ended;
      if (signal === 'SIGKILL') expect(endedBy).toBe('SIGKILL');
      else {
        expect(code, printed).toBe(130);
        expect(printed).toContain('cancelled (stop reason: cancelled)');
      }
      const alive = await poll(
        () => started.filter((child) => isAlive(child.pid)),
        (left) => left.length === 0,
        15_000,
      );
      expect(alive).toEqual([]);
    },
    60_000,
  );
});
