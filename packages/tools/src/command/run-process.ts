import { spawn } from 'node:child_process';
import type { Clock } from '@keel/core';
import type { TimerHandle } from '@keel/core/adapter';
import { OutputCapture } from './output-capture.js';
import { signalGroup, trackGroup, untrackGroup } from './process-group.js';

/** A user and group ID to run a command as (keel's process must be allowed to switch to them: root). */
export interface CommandUser {
  uid: number;
  gid: number;
}

/** One program to run. */
export interface ProcessRequest {
  /** An absolute path. */
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  user: CommandUser | undefined;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  signal: AbortSignal;
  clock: Clock;
}

/** How a program ended. */
export interface ProcessOutcome {
  exitCode: number | null;
  /** The signal that ended the program, if one did. */
  exitSignal: NodeJS.Signals | null;
  stdout: OutputCapture;
  stderr: OutputCapture;
  /** Set when keel ended the program: its timeout elapsed, or the caller's signal aborted. */
  endedBy: 'timeout' | 'abort' | undefined;
  /** Whether a process that left the group held stdout or stderr open after the program exited, and keel closed them. */
  pipesClosedByKeel: boolean;
}

/**
 * Runs a program in a process group of its own (spawned detached, so its pid is the group's id), without a shell,
 * stdin closed. On timeout or abort the whole group gets SIGTERM, then SIGKILL after `killGraceMs`. When the program
 * exits, whatever it left running in its group is killed at once. If a process that escaped the group (`setsid`)
 * still holds the output pipes `killGraceMs` after the program exited, keel closes them rather than wait forever.
 * Rejects only when the program could not be started.
 */
export function runProcess(request: ProcessRequest): Promise<ProcessOutcome> {
  const { clock, signal, killGraceMs } = request;
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(request.file, request.args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        shell: false,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
        ...(request.user === undefined ? {} : { uid: request.user.uid, gid: request.user.gid }),
      });
    } catch (error) {
      reject(error);
      return;
    }
    const pid = child.pid;
    const stdout = new OutputCapture(request.maxOutputBytes, 'head');
    const stderr = new OutputCapture(request.maxOutputBytes, 'tail');
    child.stdout?.on('data', (chunk: Buffer) => stdout.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.write(chunk));
    let endedBy: ProcessOutcome['endedBy'];
    let exited = false;
    let pipesClosedByKeel = false;
    let killTimer: TimerHandle | undefined;
    let drainTimer: TimerHandle | undefined;

    const stop = (reason: 'timeout' | 'abort'): void => {
      if (endedBy !== undefined || exited || pid === undefined) return;
      endedBy = reason;
      if (signalGroup(pid, 'SIGTERM'))
        killTimer = clock.setTimeout(() => signalGroup(pid, 'SIGKILL'), killGraceMs);
    };
    const onAbort = (): void => stop('abort');
    const timeoutTimer = clock.setTimeout(() => stop('timeout'), request.timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    if (pid !== undefined) trackGroup(pid);

    const cleanUp = (): void => {
      clock.clearTimeout(timeoutTimer);
      if (killTimer !== undefined) clock.clearTimeout(killTimer);
      if (drainTimer !== undefined) clock.clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
      if (pid !== undefined) untrackGroup(pid);
    };
    child.once('error', (error) => {
      // Once started, a failure to signal the child is not the program's outcome: 'close' still comes.
      if (pid !== undefined) return;
      cleanUp();
      reject(error);
    });
    child.once('exit', () => {
      exited = true;
      if (pid !== undefined) signalGroup(pid, 'SIGKILL');
      clock.clearTimeout(timeoutTimer);
      if (killTimer !== undefined) clock.clearTimeout(killTimer);
      drainTimer = clock.setTimeout(() => {
        pipesClosedByKeel = true;
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, killGraceMs);
    });
    child.once('close', (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      cleanUp();
      resolve({ exitCode, exitSignal, stdout, stderr, endedBy, pipesClosedByKeel });
    });
    if (signal.aborted) onAbort();
  });
}
