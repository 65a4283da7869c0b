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
  /**
   * The size of the write-ahead log, in pages, past which a commit copies it back into the database file (SQLite's
   * `wal_autocheckpoint`; an integer from 0 to 2_147_483_647; 0 turns the copying off, and the `-wal` file then grows
   * until another connection runs `PRAGMA wal_checkpoint`). Defaults
   * to 10_000 (about 40 MB of log at 4 KiB pages), ten times SQLite's own: a step's commit rewrites the same few
   * pages, and a longer log copies each of them back once for many commits (a 5-step durable run about 7% cheaper in
   * CPU than with 1,000; `npm run bench:checkpoints`), at the cost of a larger `-wal` file and a longer pause at each
   * copy.
   */
  walAutocheckpoint?: number;
}

const OPTION_NAMES = ['synchronous', 'busyTimeoutMs', 'readOnly', 'walAutocheckpoint'];
const INTEGER_MAX = 2_147_483_647;

/** Checks the constructor's options: `config.invalid` names the option at fault and the known ones. */
export function checkOptions(options: SqliteRunStoreOptions): {
  synchronous: 'normal' | 'full';
  busyTimeoutMs: number;
  readOnly: boolean;
  walAutocheckpoint: number;
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
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > INTEGER_MAX) {
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
  const walAutocheckpoint = options.walAutocheckpoint ?? 10_000;
  if (!Number.isInteger(walAutocheckpoint) || walAutocheckpoint < 0 || walAutocheckpoint > INTEGER_MAX)
    throwOptionError({
      where: 'SqliteRunStore',
      option: 'walAutocheckpoint',
      message: `walAutocheckpoint must be an integer from 0 to 2_147_483_647 (pages), not ${String(walAutocheckpoint)}`,
    });
  return { synchronous, busyTimeoutMs, readOnly, walAutocheckpoint };
}
