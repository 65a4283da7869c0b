// Spawning crash-child.js: reading the JSON lines it prints, killing it with SIGKILL at a chosen line, and starting
// it on a signal (two rivals released at the same moment).
import { spawn } from 'node:child_process';

/** One JSON line the child printed. */
export interface ChildLine {
  type: 'ready' | 'event' | 'effect' | 'result' | 'error';
  event?: string;
  step?: number;
  callIndex?: number;
  key?: string;
  status?: string;
  stopReason?: string;
  resumable?: boolean;
  errorCode?: string;
  code?: string;
  message?: string;
  output?: unknown;
  pending?: { kind: string; idempotencyKey: string; toolName: string }[];
}

/** When to kill a child: once it has printed `afterLine` lines, `delayMs` later (0: at once). */
export interface KillPlan {
  afterLine: number;
  delayMs: number;
}

/** How one child ended. */
export interface ChildOutcome {
  /** Whether SIGKILL ended it (a kill planned after the child had exited does not count). */
  killed: boolean;
  exitCode: number | null;
  /** What the child had printed last when the kill was sent: the transition the kill followed. */
  killedAfter?: string;
  /** `Date.now()` once the child had ended: a lease it held was renewed before then. */
  endedAtMs: number;
  lines: ChildLine[];
  stderr: string;
}

/** A spawned child. One started with `waitForGo` prints `ready` once set up, then waits for `go()`. */
export interface StartedChild {
  /** Resolves once the child printed its `ready` line (never, without `waitForGo`). */
  readonly ready: Promise<void>;
  /** Lets a child waiting for it run, and arms `kill`: lines are counted from here, the `ready` line excluded. */
  go(kill?: KillPlan): void;
  /** Kills a child that is not needed after all (SIGKILL). */
  discard(): void;
  readonly outcome: Promise<ChildOutcome>;
}

/** Spawns the child with `args`, with a stdin to wait on; nothing is killed before `go(kill)`. */
export function spawnChild(childPath: string, args: readonly string[]): StartedChild {
  const child = spawn(process.execPath, [childPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: ChildLine[] = [];
  let kill: KillPlan | undefined;
  let counted = 0;
  let buffered = '';
  let stderr = '';
  let killedAfter: string | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const sendKill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const last = lines[lines.length - 1];
    killedAfter = last === undefined ? 'spawn' : last.type === 'event' ? String(last.event) : last.type;
    child.kill('SIGKILL');
  };
  // A child that never reads its stdin must not make a late `go` fail the test.
  child.stdin.on('error', () => undefined);
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      const line = JSON.parse(text) as ChildLine;
      lines.push(line);
      if (line.type === 'ready') {
        markReady();
        continue;
      }
      counted++;
      if (kill !== undefined && counted === kill.afterLine) {
        if (kill.delayMs === 0) sendKill();
        else setTimeout(sendKill, kill.delayMs);
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const outcome = new Promise<ChildOutcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      const killed = signal === 'SIGKILL';
      const endedAtMs = Date.now();
      resolve({ killed, exitCode, ...(killed ? { killedAfter } : {}), endedAtMs, lines, stderr });
    });
  });
  return {
    ready,
    go: (plan) => {
      kill = plan;
      child.stdin.end('go\n');
    },
    discard: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    outcome,
  };
}

/** Spawns the child with `args` and kills it as `kill` says. */
export function runChild(childPath: string, args: readonly string[], kill?: KillPlan): Promise<ChildOutcome> {
  const started = spawnChild(childPath, args);
  started.go(kill);
  return started.outcome;
}
