import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { KeelError, MemoryRunStore, type RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';

/** The store the CLI uses when `--store` is not given: a SQLite file under the working directory. */
export const DEFAULT_STORE_PATH = join('.keel', 'keel.db');

/**
 * Opens the run store a `--store` value names: a `postgres://` or `postgresql://` URL, a SQLite file path, or
 * nothing for `./.keel/keel.db`. With `readOnly` (commands that only read: `keel runs list|show`), a SQLite file is
 * opened read-only, so that a store the user may not write can still be read, and a file that does not exist yet
 * reads as an empty store (nothing is created). A file that cannot be looked at (a directory the user may not read,
 * a path through a file) is not an empty store: it fails with `store.unavailable` (not retryable).
 */
export function openStore(
  location: string | undefined,
  workingDirectory: string,
  options: { readOnly?: boolean } = {},
): RunStore {
  if (location !== undefined && /^postgres(ql)?:\/\//.test(location))
    return new PostgresRunStore({ connectionString: location });
  if (location !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new KeelError(
      'config.invalid',
      `--store must be a postgres:// URL or a SQLite file path, not ${location}`,
    );
  }
  const path =
    location === undefined || location === ''
      ? join(workingDirectory, DEFAULT_STORE_PATH)
      : resolve(workingDirectory, location);
  if (options.readOnly !== true) return new SqliteRunStore(path);
  return storeFileExists(path) ? new SqliteRunStore(path, { readOnly: true }) : new MemoryRunStore();
}

/** Whether the SQLite file at `path` exists: false only when it (or its directory) does not; any other error throws. */
function storeFileExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    if (code === 'ENOENT') return false;
    throw new KeelError(
      'store.unavailable',
      `Cannot read the run store at ${path}: ${(error as Error).message}`,
      {
        retryable: false,
        data: { path, errno: code },
        guidance: `Check that ${dirname(path)} is a directory you may read, or name another store with --store`,
        cause: error,
      },
    );
  }
}

/** Runs `command` on the store `--store` names (see {@link openStore}), and closes the store however it ends. */
export async function withStore(
  location: string | undefined,
  workingDirectory: string,
  options: { readOnly?: boolean },
  command: (store: RunStore) => Promise<number>,
): Promise<number> {
  const store = openStore(location, workingDirectory, options);
  try {
    return await command(store);
  } finally {
    await store.close();
  }
}
