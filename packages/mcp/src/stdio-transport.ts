import { type ChildProcess, spawn } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  markGroupLeader,
  PROCESS_GROUPS,
  signalServer,
  trackServer,
  untrackServer,
} from './child-processes.js';

/** How a stdio server is started. */
export interface ChildProcessTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The whole environment of the server (nothing is inherited besides it). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  readonly onStderr: ((text: string) => void) | undefined;
  /** How long the server gets to exit after its stdin ends, and again after SIGTERM, before SIGKILL. */
  readonly closeGraceMs: number;
  /** Whether the server gets a process group (and session) of its own, on POSIX. */
  readonly processGroup: boolean;
}

const STDERR_TAIL_CHARS = 8_192;

/**
 * The MCP stdio transport, on the SDK's own framing (`ReadBuffer`, `serializeMessage`), for a server started as a
 * child process. It differs from the SDK's `StdioClientTransport` where keel needs it to:
 * - the server runs in a process group of its own (POSIX, unless `processGroup` is false), and closing ends the
 *   whole group, so a server started through `npx` or a shell leaves nothing behind;
 * - the connection counts as closed as soon as the server closes its stdout (pending requests fail at once), even
 *   while the process lingers;
 * - a server still running when this process exits is killed (see `trackServer`); while idle, the server does not
 *   keep this process alive (the SDK's request timers do while a call is pending);
 * - the last 8 KiB of its stderr are kept for error messages.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly options: ChildProcessTransportOptions;
  private readonly buffer = new ReadBuffer();
  private child: ChildProcess | undefined;
  private stderrText = '';
  private closeNotified = false;
  private shutdown: Promise<void> | undefined;

  constructor(options: ChildProcessTransportOptions) {
    this.options = options;
  }

  /** The server's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last 8 KiB the server wrote to stderr. */
  get stderrTail(): string {
    return this.stderrText;
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error('ChildProcessTransport already started'));
    const { command, args, env, cwd } = this.options;
    const grouped = this.options.processGroup && PROCESS_GROUPS;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        env: { ...env },
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: grouped,
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        if (grouped) markGroupLeader(child);
        trackServer(child);
        // Idle, the server must not keep this process alive; a pending request's timer does while one runs.
        child.unref();
        for (const stream of [child.stdin, child.stdout, child.stderr])
          (stream as { unref?: () => void } | null)?.unref?.();
        resolve();
      });
      child.on('error', (error) => {
        if (!spawned) reject(error);
        else this.onerror?.(error);
        this.connectionClosed();
      });
      child.once('exit', () => {
        untrackServer(child);
        // Whatever the server started and left in its group would be orphaned: end it too. That also closes every
        // copy of its stdout, so the answers it wrote before exiting are still read before the connection closes.
        signalServer(child, 'SIGKILL');
        setTimeout(() => this.connectionClosed(), this.options.closeGraceMs).unref();
      });
      child.once('close', () => this.connectionClosed());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout?.once('end', () => {
        // A server that closed its stdout can answer nothing more: the connection is over, and so is the server.
        this.connectionClosed();
        void this.close();
      });
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => {
        this.stderrText = (this.stderrText + text).slice(-STDERR_TAIL_CHARS);
        this.options.onStderr?.(text);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin == null || stdin.writableEnded || stdin.destroyed || this.closeNotified)
      return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Ends the connection, then the server: its stdin is closed, it gets `closeGraceMs` to exit, then SIGTERM and as
   * long again, then SIGKILL (each sent to its whole process group). Resolves when it has exited.
   */
  close(): Promise<void> {
    const child = this.child;
    if (child === undefined) {
      this.connectionClosed();
      return Promise.resolve();
    }
    this.shutdown ??= this.stop(child);
    return this.shutdown;
  }

  private async stop(child: ChildProcess): Promise<void> {
    this.connectionClosed();
    // A program that could not be started has no process to stop.
    if (child.pid === undefined) return;
    const grace = this.options.closeGraceMs;
    if (isRunning(child)) {
      child.stdin?.end();
      await exitWithin(child, grace);
    }
    if (isRunning(child)) {
      signalServer(child, 'SIGTERM');
      await exitWithin(child, grace);
    }
    if (isRunning(child)) {
      signalServer(child, 'SIGKILL');
      await exitWithin(child, grace);
    }
    this.buffer.clear();
  }

  private receive(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      // Past the SDK's 10 MB line limit the stream cannot be resynchronised.
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  /** Tells the protocol, once, that nothing more will come: it fails every pending request. */
  private connectionClosed(): void {
    if (this.closeNotified) return;
    this.closeNotified = true;
    this.onclose?.();
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exitWithin(child: ChildProcess, milliseconds: number): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      child.off('exit', done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    child.once('exit', done);
  });
}
