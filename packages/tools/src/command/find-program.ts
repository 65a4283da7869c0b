import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, resolve } from 'node:path';
import { KeelError } from '@keel/core';

/**
 * The absolute path of `program`: a name is looked up on `searchPath` (the command's own PATH, not keel's), a path
 * with a slash is taken relative to `cwd`. A program that cannot be found or run is `tool.unavailable`, not
 * retryable: the tool is misconfigured for this machine, and trying again cannot help.
 */
export async function findProgram(
  program: string,
  searchPath: string | undefined,
  cwd: string,
  toolName: string,
): Promise<string> {
  const candidates = program.includes('/')
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : (searchPath ?? '')
        .split(delimiter)
        .filter((directory) => isAbsolute(directory))
        .map((directory) => resolve(directory, program));
  for (const candidate of candidates) {
    if (await isExecutableFile(candidate)) return candidate;
  }
  const where = program.includes('/') ? '' : ' on the PATH given to the command';
  throw new KeelError(
    'tool.unavailable',
    `Tool "${toolName}" cannot run: program ${program} not found${where}`,
    {
      retryable: false,
      provider: toolName,
      data: { program },
      guidance: 'This tool is not installed on this machine; do not call it again',
    },
  );
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
