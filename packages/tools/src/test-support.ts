// Helpers for this package's tests; not exported from the package.
import { readdirSync, readFileSync } from 'node:fs';
import { KeelError, type Tool, type ToolContext } from '@keel/core';
import { vi } from 'vitest';

/** Validates `input` as the agent would, then executes the tool with a context for call `callIndex`. */
export async function callTool<Input, Output>(
  target: Tool<Input, Output>,
  input: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<Output> {
  const validation = await target.validate(input);
  if (!validation.success) {
    throw new KeelError('tool.invalid_input', validation.issues.map((issue) => issue.message).join('; '));
  }
  const context: ToolContext = {
    signal,
    idempotencyKey: 'run-1:1:0',
    runId: 'run-1',
    step: 1,
    callIndex: 0,
    attempt: 1,
  };
  return target.execute(validation.value, context);
}

/** The KeelError a promise rejects with; fails when it resolves or rejects with something else. */
export async function rejection(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** Whether process `pid` still runs (a zombie awaiting its reaper counts as ended). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Waits until none of `pids` runs any more, and returns those still running after `timeoutMs` (for the assertion).
 * A killed process closes its pipes before it finishes exiting, so it may be seen for an instant after its output
 * ended; this waits for that instant, not for a duration.
 */
export async function stillRunningAfterWait(pids: () => number[], timeoutMs = 5_000): Promise<number[]> {
  try {
    await vi.waitFor(
      () => {
        if (pids().length > 0) throw new Error('still running');
      },
      { timeout: timeoutMs, interval: 5 },
    );
  } catch {
    // The caller's assertion shows which processes are left.
  }
  return pids();
}

/** The live (not zombie) processes whose process group is `groupId`. */
export function processesInGroup(groupId: number): number[] {
  return livePids().filter((pid) => groupOf(pid) === groupId);
}

/** The process group of `pid`, or undefined when it has ended (or is a zombie). */
function groupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : Number(fields[2]);
  } catch {
    return undefined;
  }
}

/** The live (not zombie) processes of the machine. */
function livePids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => isRunning(pid));
}
