import type { ChildProcess } from 'node:child_process';
import { releaseFromLifeline, tieToLifeline } from '@keel/core/process';

/** Whether a server can be given a process group of its own (POSIX), so that what it starts ends with it. */
export const PROCESS_GROUPS = process.platform !== 'win32';

const live = new Set<ChildProcess>();
/** Servers started as the leader of their own process group. */
const groupLeaders = new WeakSet<ChildProcess>();

/** Records that `child` was started in a process group of its own (`detached`), whose id is its pid. */
export function markGroupLeader(child: ChildProcess): void {
  groupLeaders.add(child);
}
let exitHooked = false;

/**
 * Sends `signal` to the server and everything in its process group when it leads one, or to the server alone.
 * Returns false when nothing was there to receive it.
 */
export function signalServer(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    if (groupLeaders.has(child)) process.kill(-child.pid, signal);
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
 * server, and it is removed when none is left. The server is also tied to the process's lifeline, so that it is
 * killed if this process is killed (SIGKILL) while the server runs.
 */
export function trackServer(child: ChildProcess): void {
  live.add(child);
  if (child.pid !== undefined) tieToLifeline(child.pid, { group: groupLeaders.has(child) });
  if (exitHooked) return;
  process.on('exit', killAll);
  exitHooked = true;
}

/** Forgets a server that has exited. */
export function untrackServer(child: ChildProcess): void {
  live.delete(child);
  if (child.pid !== undefined) releaseFromLifeline(child.pid);
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
