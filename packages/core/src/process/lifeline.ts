import { type ChildProcess, spawn } from 'node:child_process';

// A lifeline ends the programs this process started when this process dies in a way it cannot clean up after
// (SIGKILL, the OOM killer, a crash in native code). Node cannot ask the kernel for PR_SET_PDEATHSIG without a native
// addon, so a watchdog does it: a small Node process of its own session whose stdin is a pipe from this process.
// Started programs' process groups are written to it (`+pid`, `-pid` when they end); when the pipe closes, which the
// kernel does whenever this process ends, however it ends, the watchdog kills every group still written to it and
// exits. One watchdog serves the whole process; it starts with the first program and never keeps this process alive.

/** The watchdog's program: reads `+pid`, `-pid` and `=pid` lines; on end of input, SIGKILLs what is left. */
const WATCHDOG = `
const groups = new Map();
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  pending += text;
  let end;
  while ((end = pending.indexOf('\\n')) !== -1) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    const pid = Number(line.slice(1));
    if (!Number.isSafeInteger(pid) || pid <= 1) continue;
    if (line[0] === '-') groups.delete(pid);
    else groups.set(pid, line[0] === '+');
  }
});
const killAll = () => {
  for (let round = 0; round < 4; round++) {
    for (const [pid, group] of groups) {
      try { process.kill(group ? -pid : pid, 'SIGKILL'); } catch { if (round === 0 && group) { try { process.kill(pid, 'SIGKILL'); } catch {} } }
    }
  }
  process.exit(0);
};
process.stdin.on('end', killAll);
process.stdin.on('error', killAll);
for (const signal of ['SIGINT', 'SIGHUP', 'SIGPIPE']) process.on(signal, () => {});
`;

let watchdog: ChildProcess | undefined;
let failed = false;

function write(line: string): void {
  if (failed || process.platform === 'win32') return;
  if (watchdog === undefined) {
    try {
      watchdog = spawn(process.execPath, ['--max-old-space-size=16', '-e', WATCHDOG], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
        windowsHide: true,
        env: {},
      });
    } catch {
      failed = true;
      return;
    }
    watchdog.on('error', () => {
      failed = true;
    });
    watchdog.stdin?.on('error', () => {
      failed = true;
    });
    watchdog.unref();
    (watchdog.stdin as { unref?: () => void } | null)?.unref?.();
  }
  watchdog.stdin?.write(`${line}\n`);
}

/**
 * Ties a started program to this process's life: if this process dies without ending it (SIGKILL included), the
 * watchdog sends SIGKILL to the process group `pid` leads (`group: true`, the default: spawned `detached`), or to
 * `pid` alone. Call {@link releaseFromLifeline} when the program has ended, so that its pid, once reused, is safe.
 * Does nothing on Windows. The watchdog (one per process, a Node process started on the first call) runs in a session
 * of its own, ignores SIGINT and SIGHUP, and never keeps this process alive.
 */
export function tieToLifeline(pid: number, options: { group?: boolean } = {}): void {
  if (!Number.isSafeInteger(pid) || pid <= 1) return;
  write(`${options.group === false ? '=' : '+'}${pid}`);
}

/** Forgets a program tied by {@link tieToLifeline}: it has ended. */
export function releaseFromLifeline(pid: number): void {
  if (watchdog === undefined || !Number.isSafeInteger(pid) || pid <= 1) return;
  write(`-${pid}`);
}

/** The watchdog's process id, once started (for tests). */
export function lifelinePid(): number | undefined {
  return watchdog?.pid;
}
