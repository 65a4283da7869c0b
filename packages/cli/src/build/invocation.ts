import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TrustFlags } from '@keel/agent-file';
import { KeelError } from '@keel/core';

/** How a run was started from the command line: what `keel resume` needs to rebuild the same agent. */
export interface Invocation {
  /** The agent file, as an absolute path. */
  agentFile: string;
  faults?: string;
  seed?: number;
  /** The `--allow-key-host` values the run was started with: resuming it may send its key there too. */
  allowedKeyHosts?: string[];
  /** The consent the run was started with (`--allow-host`, `--allow-programs`, `--allow-env`): resuming keeps it. */
  trust?: TrustFlags;
}

/** Where invocations are kept: beside the default store, one small JSON file per run. */
export function invocationPath(workingDirectory: string, runId: string): string {
  return join(workingDirectory, '.keel', 'runs', `${encodeURIComponent(runId)}.json`);
}

/** Records how `runId` was started. */
export async function saveInvocation(
  workingDirectory: string,
  runId: string,
  invocation: Invocation,
): Promise<void> {
  const path = invocationPath(workingDirectory, runId);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `${JSON.stringify(invocation, null, 2)}\n`);
}

/**
 * Reads how `runId` was started here. A run started on another machine (a shared PostgreSQL store) or in another
 * directory has no record here: `--agent <file>` (relative to the working directory, or absolute) names the agent
 * file instead.
 */
export async function loadInvocation(
  workingDirectory: string,
  runId: string,
  agentFile: string | undefined,
): Promise<Invocation> {
  let stored: Invocation | undefined;
  try {
    stored = JSON.parse(await readFile(invocationPath(workingDirectory, runId), 'utf8')) as Invocation;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new KeelError(
        'config.invalid',
        `Cannot read how run ${runId} was started: ${(error as Error).message}`,
      );
    }
  }
  if (agentFile !== undefined) return { ...stored, agentFile: resolve(workingDirectory, agentFile) };
  if (stored === undefined) {
    throw new KeelError('config.invalid', `This directory has no record of how run ${runId} was started`, {
      guidance: 'Name its agent file: keel resume <run-id> --agent <agent.yaml>',
    });
  }
  return stored;
}
