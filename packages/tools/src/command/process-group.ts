import { releaseFromLifeline, tieToLifeline } from '@keel/core/process';

/** Process groups started by keel and not yet ended: killed if keel's own process exits first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/**
 * Sends `signal` to every process of the group led by `pid` (the command was spawned detached, so its pid is its
 * group's id). A SIGKILL is repeated until the group is empty, so that processes forked while the signal was being
 * delivered die too. Returns false once the group no longer exists.
 */
export function signalGroup(pid: number, signal: 'SIGTERM' | 'SIGKILL'): boolean {
  const rounds = signal === 'SIGKILL' ? 4 : 1;
  for (let round = 0; round < rounds; round++) {
    try {
      process.kill(-pid, signal);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ESRCH') return false;
      if (code !== 'EPERM') throw error;
      // A group whose members changed user is out of reach; the leader itself still is.
      try {
        process.kill(pid, signal);
      } catch {
        return false;
      }
      return true;
    }
  }
  return true;
}

/**
 * Remembers a live group, so that it is killed if keel's process exits while the command runs, and ties it to keel's
 * lifeline, so that it is killed if keel's process is killed (SIGKILL) while the command runs.
 */
export function trackGroup(pid: number): void {
  liveGroups.add(pid);
  tieToLifeline(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const group of liveGroups) signalGroup(group, 'SIGKILL');
  });
}

/** Forgets a group that has ended. */
export function untrackGroup(pid: number): void {
  liveGroups.delete(pid);
  releaseFromLifeline(pid);
}
