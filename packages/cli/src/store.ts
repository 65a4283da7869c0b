import { join } from 'node:path';
import { KeelError, type RunStore } from '@keel/core';
import { PostgresRunStore } from '@keel/store-postgres';
import { SqliteRunStore } from '@keel/store-sqlite';

/** The store the CLI uses when `--store` is not given: a SQLite file under the working directory. */
export const DEFAULT_STORE_PATH = join('.keel', 'keel.db');

/**
 * Opens the run store a `--store` value names: a `postgres://` or `postgresql://` URL, a SQLite file path, or
 * nothing for `./.keel/keel.db`.
 */
export function openStore(location: string | undefined, workingDirectory: string): RunStore {
  if (location === undefined || location === '')
    return new SqliteRunStore(join(workingDirectory, DEFAULT_STORE_PATH));
  if (/^postgres(ql)?:\/\//.test(location)) return new PostgresRunStore({ connectionString: location });
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new KeelError(
      'config.invalid',
      `--store must be a postgres:// URL or a SQLite file path, not ${location}`,
    );
  }
  return new SqliteRunStore(location);
}
