import { existsSync, readFileSync, statSync } from 'node:fs';
import { KeelError } from '@keel/core';
import Database from 'better-sqlite3';

/**
 * Opens an existing keel store at `path` for reading only (see `SqliteRunStoreOptions.readOnly`): in place when
 * SQLite can, otherwise (a WAL database in a read-only directory, whose `-shm` file cannot be created) from a copy
 * in memory, provided the `-wal` file holds no writes that the copy would miss. Writes fail with SQLITE_READONLY.
 */
export function openReadOnly(path: string, busyTimeoutMs: number): Database.Database {
  if (path === ':memory:' || !existsSync(path)) {
    throw new KeelError(
      'config.invalid',
      `SqliteRunStore: readOnly needs an existing database; there is no database at ${path}`,
      {
        data: { path },
      },
    );
  }
  let database = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  try {
    checkKeelSchema(database, path);
  } catch (error) {
    database.close();
    const code = String((error as { code?: unknown }).code ?? '');
    const walInPlaceFailed = code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN');
    if (!walInPlaceFailed || walHoldsWrites(path)) throw error;
    const image = readFileSync(path);
    // Bytes 18 and 19 say "WAL" (2); an image in memory has no WAL: mark it a rollback-journal database (1).
    if (image[18] === 2 && image[19] === 2) image.fill(1, 18, 20);
    database = new Database(image);
    checkKeelSchema(database, path);
  }
  database.pragma('query_only = ON');
  return database;
}

function walHoldsWrites(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 0;
  } catch {
    return false;
  }
}

/** `store.invalid` for a SQLite database that keel never set up. */
function checkKeelSchema(database: Database.Database, path: string): void {
  const table = database
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'keel_schema'")
    .get();
  if (table === undefined) {
    throw new KeelError(
      'store.invalid',
      `${path} is a SQLite database, but not a keel run store (no keel_schema table)`,
      {
        data: { path },
        guidance: 'Give --store the path of a keel store, such as .keel/keel.db',
      },
    );
  }
}
