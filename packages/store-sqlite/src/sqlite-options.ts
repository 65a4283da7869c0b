import { throwOptionError } from '@keel/core/adapter';

/** Options of {@link SqliteRunStore}. */
export interface SqliteRunStoreOptions {
  /**
   * `normal` (the default) survives a crash of the process at any instant, which is what resume needs; `full` also
   * survives a power loss, at the cost of an fsync per checkpoint.
   */
  synchronous?: 'normal' | 'full';
  /**
   * How long a write waits for another process's lock before failing with `store.unavailable`, in milliseconds (an
   * integer from 0 to 2_147_483_647). Defaults to 5000.
   */
  busyTimeoutMs?: number;
  /**
   * Opens an existing database for reading only, as `keel runs list|show` do, so that a store whose file or directory
   * is read-only can still be read: no directory or file is created, nothing is migrated, and every write fails with
   * `store.invalid`. When SQLite cannot use the WAL in place (a read-only directory, where its `-shm` file cannot be
   * created) and the `-wal` file holds nothing, the file is read into memory and queried there. Defaults to false.
   */
  readOnly?: boolean;
}

const OPTION_NAMES = ['synchronous', 'busyTimeoutMs', 'readOnly'];

/** Checks the constructor's options: `config.invalid` names the option at fault and the known ones. */
export function checkOptions(options: SqliteRunStoreOptions): {
  synchronous: 'normal' | 'full';
  busyTimeoutMs: number;
  readOnly: boolean;
} {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throwOptionError({
      where: 'SqliteRunStore',
      option: 'options',
      message: `options must be an object such as { busyTimeoutMs: 5000 }; known options: ${OPTION_NAMES.join(', ')}`,
    });
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key))
      throwOptionError({
        where: 'SqliteRunStore',
        option: 'unknown',
        message: `unknown option "${key}"; known options: ${OPTION_NAMES.join(', ')}`,
      });
  }
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') {
    throwOptionError({
      where: 'SqliteRunStore',
      option: 'synchronous',
      message: `synchronous must be "normal" or "full", not ${JSON.stringify(synchronous)}`,
    });
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2_147_483_647) {
    throwOptionError({
      where: 'SqliteRunStore',
      option: 'busyTimeoutMs',
      message: `busyTimeoutMs must be an integer from 0 to 2_147_483_647 (milliseconds), not ${String(busyTimeoutMs)}`,
    });
  }
  const readOnly = options.readOnly ?? false;
  if (typeof readOnly !== 'boolean')
    throwOptionError({
      where: 'SqliteRunStore',
      option: 'readOnly',
      message: `readOnly must be true or false, not ${JSON.stringify(readOnly)}`,
    });
  return { synchronous, busyTimeoutMs, readOnly };
}
