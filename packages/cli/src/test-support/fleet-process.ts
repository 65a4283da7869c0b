// One `keel worker` child process of the fleet test: spawned from the built CLI with `--json`, its event lines read
// as they come, killed with SIGKILL or stopped with SIGTERM, and started again. A test helper, not
// published.
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { KEEL_BINARY } from './keel-cli.js';

/** Resolves once `done()` holds, looking every 20 ms at what the process printed; rejects if it exits first. */
export async function waitForLines(worker: FleetProcess, done: () => boolean): Promise<void> {
  while (!done()) {
    if (!worker.alive) throw new Error(`the worker exited: ${worker.stderr}`);
    await sleep(20);
  }
}

/** One line a worker printed (`WorkerEvent` as JSON, or a `--log json` line), with the worker it came from. */
export interface WorkerLine {
  /** The line's other fields. */
  [field: string]: unknown;
  /** The worker event's type (`--json`); a `--log json` line has `event` instead. */
  type?: string;
  runId?: string;
  status?: string;
  stopReason?: string;
  reason?: string;
  step?: number;
  worker: number;
  generation: number;
}

/** A worker slot of the fleet: at most one live process at a time, started again after each death. */
export class FleetProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Processes started in this slot so far. */
  generation = 0;
  /** Lines the current process printed. */
  lines = 0;
  stderr = '';

  constructor(
    readonly index: number,
    private readonly args: (generation: number) => string[],
    private readonly workingDirectory: string,
    private readonly onLine: (line: WorkerLine) => void,
  ) {}

  /** The exit code of the last process, once it has exited (null while it runs, or when a signal ended it). */
  get exitCode(): number | null {
    return this.child?.exitCode ?? null;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts a new process in this slot; resolves once it printed its first line or ran for a while. */
  start(): void {
    const generation = ++this.generation;
    this.lines = 0;
    const child = spawn(process.execPath, [KEEL_BINARY, ...this.args(generation)], {
      cwd: this.workingDirectory,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    this.child = child;
    let buffered = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const text = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
        if (!text.startsWith('{')) continue;
        this.lines++;
        try {
          this.onLine({
            ...(JSON.parse(text) as Omit<WorkerLine, 'worker' | 'generation'>),
            worker: this.index,
            generation,
          });
        } catch {
          // A line cut by SIGKILL.
        }
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4_000);
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Resolves once the current process has exited. */
  waitForExit(): Promise<void> {
    return this.exited;
  }

  /** SIGKILL: the process dies at once, holding whatever it held. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM: a graceful shutdown; resolves once the process has exited. */
  async stop(): Promise<void> {
    if (this.alive) this.child?.kill('SIGTERM');
    await this.exited;
  }
}
