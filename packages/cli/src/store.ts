import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KeelError, MemoryRunStore, type RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';

/** The store the CLI uses when `--store` is not given: a SQLite file under the working directory. */
export const DEFAULT_STORE_PATH = join('.keel', 'keel.db');

/**
 * Opens the run store a `--store` value names: a `postgres://` or `postgresql://` URL, a SQLite file path, or
 * nothing for `./.keel/keel.db`. With `readOnly` (commands that only read: `keel runs list|show`), a SQLite file is
 * opened read-only, so that a store the user may not write can still be read, and a file that does not exist yet
 * reads as an empty store (nothing is created).
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
  return existsSync(path) ? new SqliteRunStore(path, { readOnly: true }) : new MemoryRunStore();
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
