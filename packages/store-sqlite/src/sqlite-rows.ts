import { KeelError } from '@keel/core';

// How SQLite failures map to KeelErrors. (Rows map to records through @keel/core's SQL row mapping.)

/**
 * A SQLite failure as a KeelError: a constraint violation is a conflict (a duplicate run id); anything else (a busy or
 * locked database, an I/O error, a full disk, a closed connection) counts as the store being unavailable.
 */
export function toStoreError(error: unknown, context: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  const message = `${context}: ${(error as Error)?.message ?? String(error)}`;
  const data: Record<string, string> = code === '' ? {} : { sqliteCode: code };
  const kind = code.startsWith('SQLITE_CONSTRAINT') ? 'store.conflict' : 'store.unavailable';
  return new KeelError(kind, message, { cause: error, data });
}
