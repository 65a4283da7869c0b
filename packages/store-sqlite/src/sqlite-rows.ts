import { KeelError } from '@keel/core';

// How SQLite failures map to KeelErrors. (Rows map to records through @keel/core's SQL row mapping.)

/**
 * A SQLite failure as a KeelError:
 * - a constraint violation is `store.conflict` (a duplicate run id);
 * - a damaged file or one that is not a SQLite database (SQLITE_CORRUPT, SQLITE_NOTADB) is `store.invalid`, not worth
 *   retrying, with guidance;
 * - a write to a store opened with `readOnly` is `store.invalid`;
 * - anything else (a busy or locked database, an I/O error, a full disk, a closed connection) is `store.unavailable`.
 */
export function toStoreError(
  error: unknown,
  context: string,
  store: { path: string; readOnly: boolean },
): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  const reason = (error as Error)?.message ?? String(error);
  const data: Record<string, string> = { path: store.path, ...(code === '' ? {} : { sqliteCode: code }) };
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return new KeelError(
      'store.invalid',
      `The SQLite run store ${store.path} is damaged or not a SQLite database (${code}: ${reason})`,
      {
        cause: error,
        data,
        guidance:
          `Move ${store.path} aside (keel then starts a new, empty store there) or restore it from a backup; ` +
          `"sqlite3 ${store.path} .recover" may save the runs it still holds`,
      },
    );
  }
  if (store.readOnly && code.startsWith('SQLITE_READONLY')) {
    return new KeelError('store.invalid', `${context}: the store ${store.path} was opened read-only`, {
      cause: error,
      data,
      guidance: 'Open it without readOnly to write to it',
    });
  }
  const kind = code.startsWith('SQLITE_CONSTRAINT') ? 'store.conflict' : 'store.unavailable';
  return new KeelError(kind, `${context}: ${reason}`, { cause: error, data });
}
