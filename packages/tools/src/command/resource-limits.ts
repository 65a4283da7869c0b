import { existsSync } from 'node:fs';
import { optionError, rejectUnknownOptions, requireOptionsObject } from '@keel/core/adapter';

/**
 * Kernel resource limits (setrlimit) applied to a command and everything it starts, through `prlimit` from
 * util-linux. Each one is a hard limit the program cannot raise. Every option defaults to no limit.
 */
export interface ResourceLimits {
  /** CPU time, in seconds (RLIMIT_CPU). Past it the program gets SIGXCPU, then SIGKILL. */
  cpuSeconds?: number;
  /**
   * Virtual address space, in bytes (RLIMIT_AS): allocations past it fail. This is reserved memory, not resident
   * memory; runtimes that reserve large heaps up front (Node, the JVM, Go) need several times what they use.
   */
  memoryBytes?: number;
  /** Open file descriptors (RLIMIT_NOFILE), stdin/stdout/stderr included. */
  openFiles?: number;
  /**
   * Processes (RLIMIT_NPROC). The kernel counts every process of the command's user ID, not only the command's own,
   * and does not apply the limit to root: it requires `user` naming a dedicated non-root account, so that a fork
   * bomb stops at this many processes.
   */
  maxProcesses?: number;
  /** Largest file the program may write, in bytes (RLIMIT_FSIZE); a bigger write fails with SIGXFSZ. */
  fileSizeBytes?: number;
}

const FLAGS = {
  cpuSeconds: '--cpu',
  memoryBytes: '--as',
  openFiles: '--nofile',
  maxProcesses: '--nproc',
  fileSizeBytes: '--fsize',
} as const satisfies Record<keyof ResourceLimits, string>;

const MINIMUMS: Record<keyof ResourceLimits, number> = {
  cpuSeconds: 1,
  memoryBytes: 1_048_576,
  openFiles: 3,
  maxProcesses: 1,
  fileSizeBytes: 0,
};

/** Where `prlimit` is looked for. */
export const PRLIMIT_PATHS: readonly string[] = Object.freeze(['/usr/bin/prlimit', '/bin/prlimit']);

/** How limits are applied: the `prlimit` binary and its arguments before `--`. */
export interface LimitWrapper {
  readonly prlimit: string;
  readonly arguments: readonly string[];
}

/**
 * Checks `limits` and finds `prlimit`. Fails closed with `config.invalid`: limits asked for on a machine without
 * `prlimit`, or a process limit that would not bind (root), are errors at creation, never silently dropped.
 * Undefined when no limit is set.
 */
export function limitWrapper(
  limits: unknown,
  where: string,
  runsAsRoot: boolean,
  exists: (path: string) => boolean = existsSync,
): LimitWrapper | undefined {
  if (limits === undefined) return undefined;
  requireOptionsObject(limits, { where: `${where} limits`, example: '{ cpuSeconds: 10, maxProcesses: 32 }' });
  rejectUnknownOptions(limits, Object.keys(FLAGS), { where: `${where} limits` });
  const values = limits as Record<keyof ResourceLimits, unknown>;
  const argumentsOf: string[] = [];
  for (const key of Object.keys(FLAGS) as (keyof ResourceLimits)[]) {
    const value = values[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < MINIMUMS[key]) {
      throw optionError({
        where,
        option: 'limits',
        path: ['limits', key],
        message: `limits.${key} must be an integer of at least ${MINIMUMS[key]}, got ${String(value)}`,
      });
    }
    argumentsOf.push(`${FLAGS[key]}=${value}`);
  }
  if (argumentsOf.length === 0) return undefined;
  if (values.maxProcesses !== undefined && runsAsRoot) {
    throw optionError({
      where,
      option: 'limits',
      path: ['limits', 'maxProcesses'],
      message:
        'limits.maxProcesses does not bind a command running as root (the kernel exempts it); set user: { uid, gid } to a dedicated non-root account, such as nobody (65534)',
    });
  }
  const prlimit = PRLIMIT_PATHS.find((path) => exists(path));
  if (prlimit === undefined) {
    throw optionError({
      where: where,
      option: 'limits',
      message: `limits need prlimit from util-linux, which is not installed (looked in ${PRLIMIT_PATHS.join(', ')}); install util-linux or drop the limits`,
    });
  }
  return { prlimit, arguments: argumentsOf };
}
