import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { KeelError } from '@keel/core';

/** True when `path` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

/** Links followed in one path before it is refused, as the kernel's own limit (`ELOOP`). */
const MAX_LINKS = 40;

/**
 * Resolves `requested` (relative to `base`, or absolute) to a real absolute path below `realRoot`, following every
 * symbolic link on the way. A path that does not exist yet is allowed (an output file): its deepest existing
 * ancestor is resolved and the rest appended. A dangling symbolic link (one whose target does not exist yet) is
 * resolved too, by reading it, since a program writing through it creates its target: the path is confined where
 * the link leads, not where the link sits. Refused with `tool.permission_denied` when the result leaves the root,
 * by `..`, an absolute path elsewhere, or a symbolic link pointing out, dangling or not.
 */
export async function confinePath(
  requested: string,
  field: string,
  realRoot: string,
  base: string,
): Promise<string> {
  if (requested === '') {
    throw new KeelError('tool.invalid_input', `"${field}" must be a non-empty path`, { data: { field } });
  }
  const real = await realPathOf(resolve(base, requested), field);
  if (!isInside(realRoot, real)) {
    throw new KeelError(
      'tool.permission_denied',
      `The path given as "${field}" leaves the tool's directory`,
      {
        data: { field, path: requested },
        guidance: `Give a path inside the working directory, relative to it (such as "src/index.ts"); "..", absolute paths elsewhere and links that point outside are refused`,
      },
    );
  }
  return real;
}

/**
 * The real path of `path`, resolving its deepest existing ancestor when the path itself does not exist. Each missing
 * component is looked at with `lstat`: one that exists is a dangling link, which is read and followed (its target,
 * relative to the link's directory, then resolved the same way), at most {@link MAX_LINKS} links in all.
 */
async function realPathOf(path: string, field: string, links = 0): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(current) === current) {
        throw unresolvable(field, code, error);
      }
      const target = await danglingLinkTarget(current, field);
      if (target !== undefined) {
        if (links >= MAX_LINKS) throw unresolvable(field, 'ELOOP', error);
        const followed = resolve(dirname(current), target);
        return realPathOf(join(followed, ...missing.reverse()), field, links + 1);
      }
      missing.push(basename(current));
      current = dirname(current);
    }
  }
}

/** The target of `path` when it is a symbolic link (realpath failed, so one that dangles); undefined when missing. */
async function danglingLinkTarget(path: string, field: string): Promise<string | undefined> {
  try {
    const stats = await lstat(path);
    return stats.isSymbolicLink() ? await readlink(path) : undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw unresolvable(field, code, error);
  }
}

function unresolvable(field: string, code: unknown, cause: unknown): KeelError {
  return new KeelError(
    'tool.invalid_input',
    `The path given as "${field}" cannot be resolved (${String(code)})`,
    {
      data: { field },
      cause,
    },
  );
}

/**
 * The real paths of a tool's root and working directory, checked at each call (either may have been replaced by a
 * link since the tool was made). `config`-level faults are reported as `tool.unavailable`, not retryable: the tool
 * is misconfigured for this machine, and the model cannot fix it.
 */
export async function resolveDirectories(
  root: string,
  cwd: string,
  toolName: string,
): Promise<{ realRoot: string; realCwd: string }> {
  let realRoot: string;
  let realCwd: string;
  try {
    realRoot = await realpath(root);
    realCwd = await realpath(cwd);
  } catch (error) {
    throw new KeelError(
      'tool.unavailable',
      `Tool "${toolName}" cannot run: its directory ${cwd} is missing`,
      {
        retryable: false,
        provider: toolName,
        cause: error,
      },
    );
  }
  if (!isInside(realRoot, realCwd)) {
    throw new KeelError(
      'tool.unavailable',
      `Tool "${toolName}" cannot run: its working directory left its root`,
      {
        retryable: false,
        provider: toolName,
        data: { cwd, root },
      },
    );
  }
  return { realRoot, realCwd };
}
