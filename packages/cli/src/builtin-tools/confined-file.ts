import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, realpath } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { KeelError } from '@keel/core';

// How read_file opens a file below a root without ever following a symbolic link, race-free.
//
// On Linux, each path component is opened relative to the descriptor of the directory before it, through
// `/proc/self/fd/<fd>/<name>` (an `openat` that Node does not expose otherwise), with O_NOFOLLOW: a link swapped in
// at any moment makes that open fail (ELOOP or ENOTDIR); it is never followed. The file is opened O_NONBLOCK (a FIFO
// cannot block a thread-pool thread) and O_NOCTTY, then checked through its own descriptor (fstat): only a regular
// file is read, and only as many bytes as allowed. Nothing is checked by path and then opened by path again.
//
// Where /proc/self/fd does not exist (macOS, BSD), Node offers no race-free way to walk directories (an lstat of each
// directory before the open leaked the outside file in 1 read of ~4,500 under the race test), so read_file reads
// only files directly in the root there: the one component under the model's control is opened O_NOFOLLOW from the
// root's real path, which is race-free; a deeper path is refused with a message that says why.

const DESCRIPTORS = '/proc/self/fd';
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NON_BLOCKING = constants.O_NONBLOCK ?? 0;
const NO_TERMINAL = constants.O_NOCTTY ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

/**
 * How {@link readConfinedFile} opens a path: `descriptors` walks any depth, one descriptor per directory (needs
 * `/proc/self/fd`); `top-level` reads only files directly in the root.
 */
export type ConfinementStrategy = 'descriptors' | 'top-level';

/** The strategy this platform allows: `descriptors` where `/proc/self/fd` exists, else `top-level`. */
export const DEFAULT_CONFINEMENT: ConfinementStrategy = existsSync(DESCRIPTORS) ? 'descriptors' : 'top-level';

/** What {@link readConfinedFile} read. */
export interface ConfinedFile {
  /** The path below the root, normalised (`docs/guide.md`). */
  path: string;
  content: string;
}

/**
 * Reads the regular file at `requested` (a relative path) below `root`, as UTF-8, refusing with a `KeelError`:
 * `tool.permission_denied` for an absolute path, a `..` component, a symbolic link anywhere on the path (even one
 * that stays inside), a FIFO, socket or device; `tool.invalid_input` for a NUL byte, a missing file, a directory, or
 * a file over `maxBytes`. Refusals carry `data.path` and, for a file of the wrong kind, `data.fileType`.
 */
export async function readConfinedFile(
  root: string,
  requested: string,
  options: { maxBytes: number; signal?: AbortSignal; strategy?: ConfinementStrategy },
): Promise<ConfinedFile> {
  const components = splitConfined(requested);
  const path = components.join('/');
  const realRoot = await realpath(root);
  options.signal?.throwIfAborted();
  const handle =
    (options.strategy ?? DEFAULT_CONFINEMENT) === 'descriptors'
      ? await openByDescriptors(realRoot, components, requested)
      : await openTopLevel(realRoot, components, requested);
  try {
    const stats = await handle.stat();
    refuseUnlessRegular(stats, requested);
    if (stats.size > options.maxBytes) throw tooBig(requested, stats.size, options.maxBytes);
    // One byte more than allowed tells a file that grew since the fstat.
    const buffer = Buffer.alloc(options.maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      options.signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > options.maxBytes) throw tooBig(requested, length, options.maxBytes);
    return { path, content: buffer.toString('utf8', 0, length) };
  } finally {
    await handle.close();
  }
}

/** The path's components; refuses what could leave the root or name it. */
function splitConfined(requested: string): string[] {
  if (requested.includes('\0')) {
    throw new KeelError('tool.invalid_input', 'The path contains a NUL byte', { data: { path: requested } });
  }
  if (isAbsolute(requested) || requested.startsWith('\\')) {
    throw new KeelError(
      'tool.permission_denied',
      'Absolute paths are not allowed; give a path relative to the agent file',
      { guidance: 'Use a relative path such as notes/today.md', data: { path: requested } },
    );
  }
  const components = requested.split(/[/\\]/).filter((component) => component !== '' && component !== '.');
  if (components.includes('..')) {
    throw new KeelError('tool.permission_denied', `The path ${requested} goes up a directory with ..`, {
      guidance: 'Only files below the agent file directory can be read; give a path without ..',
      data: { path: requested },
    });
  }
  if (components.length === 0) {
    throw new KeelError(
      'tool.invalid_input',
      `The path ${requested} names the agent's directory, not a file`,
      {
        data: { path: requested, fileType: 'directory' },
      },
    );
  }
  return components;
}

async function openByDescriptors(
  realRoot: string,
  components: string[],
  requested: string,
): Promise<FileHandle> {
  let directory = await open(realRoot, constants.O_RDONLY | DIRECTORY);
  try {
    for (const [index, component] of components.entries()) {
      const last = index === components.length - 1;
      const at = `${DESCRIPTORS}/${directory.fd}/${component}`;
      const flags = constants.O_RDONLY | NO_FOLLOW | NON_BLOCKING | NO_TERMINAL | (last ? 0 : DIRECTORY);
      let next: FileHandle;
      try {
        next = await open(at, flags);
      } catch (error) {
        throw await openRefusal(error, at, requested, components.slice(0, index + 1).join('/'), last);
      }
      if (last) return next;
      await directory.close();
      directory = next;
    }
  } finally {
    // The file's own handle was returned above; what is left open here is the last directory.
    await directory.close().catch(() => undefined);
  }
  throw new Error('unreachable: a confined path has at least one component');
}

async function openTopLevel(realRoot: string, components: string[], requested: string): Promise<FileHandle> {
  if (components.length > 1) {
    throw new KeelError(
      'tool.permission_denied',
      `${requested} is in a subdirectory; on this platform read_file reads only files directly in the agent's directory`,
      {
        data: { path: requested },
        guidance: 'Node offers no race-free way to open subdirectories here without following links',
      },
    );
  }
  const at = `${realRoot}/${components[0]}`;
  try {
    return await open(at, constants.O_RDONLY | NO_FOLLOW | NON_BLOCKING | NO_TERMINAL);
  } catch (error) {
    throw await openRefusal(error, at, requested, components[0]!, true);
  }
}

/** A failed open as a typed refusal; a link is told apart by an lstat, for the message only. */
async function openRefusal(
  error: unknown,
  at: string,
  requested: string,
  walked: string,
  last: boolean,
): Promise<KeelError> {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return symbolicLink(requested, walked);
  if (code === 'ENOTDIR') {
    const kind = await lstat(at).catch(() => undefined);
    if (kind?.isSymbolicLink() === true) return symbolicLink(requested, walked);
    return notADirectory(requested, walked);
  }
  if (code === 'ENOENT') {
    return new KeelError('tool.invalid_input', `No such file: ${requested}`, {
      cause: error,
      data: { path: requested },
      guidance: last ? 'Check the file name' : `There is no directory ${walked}`,
    });
  }
  if (code === 'ENXIO' || code === 'ENODEV' || code === 'EOPNOTSUPP') {
    // A socket, or a device with nothing behind it, cannot even be opened: say what it is.
    const stats = await lstat(at).catch(() => undefined);
    if (stats !== undefined && !stats.isFile()) return wrongKind(stats, requested);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new KeelError('tool.permission_denied', `The file ${requested} cannot be read (${code})`, {
      cause: error,
      data: { path: requested },
    });
  }
  return new KeelError('tool.failed', `Cannot open ${requested}: ${(error as Error).message}`, {
    cause: error,
    data: { path: requested },
  });
}

function refuseUnlessRegular(stats: Stats, requested: string): void {
  if (!stats.isFile()) throw wrongKind(stats, requested);
}

function wrongKind(stats: Stats, requested: string): KeelError {
  const fileType = fileTypeOf(stats);
  if (fileType === 'directory') {
    return new KeelError('tool.invalid_input', `${requested} is a directory, not a file`, {
      data: { path: requested, fileType },
      guidance: 'Give the path of a file inside it',
    });
  }
  return new KeelError(
    'tool.permission_denied',
    `${requested} is a ${fileType}; read_file reads regular files only`,
    {
      data: { path: requested, fileType },
    },
  );
}

function fileTypeOf(stats: Stats): string {
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

function symbolicLink(requested: string, walked: string): KeelError {
  return new KeelError(
    'tool.permission_denied',
    `${walked} is a symbolic link; read_file does not follow links${walked === requested ? '' : ` (in ${requested})`}`,
    { data: { path: requested, fileType: 'symbolic link' }, guidance: 'Give the path of the file itself' },
  );
}

function notADirectory(requested: string, walked: string): KeelError {
  return new KeelError('tool.invalid_input', `${walked} is not a directory (in ${requested})`, {
    data: { path: requested },
  });
}

function tooBig(requested: string, size: number, maxBytes: number): KeelError {
  return new KeelError(
    'tool.invalid_input',
    `The file ${requested} is ${size} bytes; read_file reads at most ${maxBytes}`,
    {
      data: { path: requested, sizeBytes: size, maxBytes },
    },
  );
}
