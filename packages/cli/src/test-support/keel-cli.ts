// The CLI test driver: `keel` as the built binary in a child process (what a user runs), or `main()` in this process
// with its output captured. A test helper, not published (the package's tsconfig leaves test-support/ out of dist).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { main } from '../main.js';
import type { Output } from '../output/output.js';

/** The built CLI's entry (build first: `npm run build`). */
export const KEEL_BINARY = fileURLToPath(new URL('../../bin/keel.js', import.meta.url));

/** What a run of `keel` gave: its exit code and what it printed. */
export interface KeelOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Root ignores file modes: a test of an unreadable store then runs keel as an unprivileged user (nobody). */
export const UNPRIVILEGED = process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : {};

/** Options of {@link keelBinary}. */
export interface KeelBinaryOptions {
  /** The working directory. */
  cwd: string;
  /** The environment. Defaults to this process's, with NO_COLOR=1. */
  env?: NodeJS.ProcessEnv;
  /** Runs as nobody when this process is root (see {@link UNPRIVILEGED}). Defaults to false. */
  unprivileged?: boolean;
  /** Kills the child after this long. Defaults to none. */
  timeoutMs?: number;
  /** The most output read. Defaults to Node's (1 MiB). */
  maxBufferBytes?: number;
}

/** Runs the built `keel` once with `args`; resolves with its exit code and output, never rejects on a non-zero exit. */
export async function keelBinary(options: KeelBinaryOptions, ...args: string[]): Promise<KeelOutcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [KEEL_BINARY, ...args], {
      cwd: options.cwd,
      env: options.env ?? { ...process.env, NO_COLOR: '1' },
      ...(options.unprivileged === true ? UNPRIVILEGED : {}),
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      ...(options.maxBufferBytes === undefined ? {} : { maxBuffer: options.maxBufferBytes }),
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** Runs the built `keel` in `directory` without colours (see {@link keelBinary}). */
export function runKeel(directory: string, ...args: string[]): Promise<KeelOutcome> {
  return keelBinary({ cwd: directory }, ...args);
}

/** An Output that keeps what a command prints, stdout and stderr apart, without colour. */
export function capturedOutput(): Output & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    out: (line) => lines.push(line),
    error: (line) => errors.push(line),
    colour: false,
    lines,
    errors,
  };
}

/** Runs `main()` in this process with its output captured; `stdout` and `stderr` are the lines joined. */
export async function keelInProcess(
  argv: readonly string[],
  options: { cwd: string; environment?: NodeJS.ProcessEnv },
): Promise<KeelOutcome> {
  const output = capturedOutput();
  const code = await main(argv, options.environment ?? {}, output, options.cwd);
  return { code, stdout: output.lines.join('\n'), stderr: output.errors.join('\n') };
}
