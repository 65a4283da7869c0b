import type { ChildProcess } from 'node:child_process';

/** Servers run in a process group of their own on POSIX, so that what they start ends with them. */
export const OWN_PROCESS_GROUP = process.platform !== 'win32';

const live = new Set<ChildProcess>();
let exitHooked = false;

/**
 * Sends `signal` to the server and everything in its process group (POSIX), or to the server alone (Windows).
 * Returns false when nothing was there to receive it.
 */
export function signalServer(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    if (OWN_PROCESS_GROUP) process.kill(-child.pid, signal);
    else child.kill(signal);
    return true;
  } catch {
    // ESRCH: the group is already empty.
    return false;
  }
}

/**
 * Remembers a running server so that it is killed (SIGKILL, with its process group) if this process exits while the
 * server still runs: a forgotten `close()` or a `process.exit()` leaves no orphan. One `exit` listener serves every
 * server, and it is removed when none is left.
 */
export function trackServer(child: ChildProcess): void {
  live.add(child);
  if (exitHooked) return;
  process.on('exit', killAll);
  exitHooked = true;
}

/** Forgets a server that has exited. */
export function untrackServer(child: ChildProcess): void {
  live.delete(child);
  if (live.size > 0 || !exitHooked) return;
  process.off('exit', killAll);
  exitHooked = false;
}

/** How many servers this process is running now (for tests). */
export function runningServerCount(): number {
  return live.size;
}

function killAll(): void {
  for (const child of live) signalServer(child, 'SIGKILL');
  live.clear();
}
