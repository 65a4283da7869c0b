import { KeelError } from '@keel/core';

// How pg failures map to KeelErrors. (Rows map to records through @keel/core's SQL row mapping.)

/**
 * Classifies a pg or socket failure by its SQL state. Lost races are conflicts (23505 unique_violation; 40001
 * serialization_failure and 40P01 deadlock, worth another attempt). The server refusing the statement itself is
 * `store.invalid`, not worth retrying: class 42 (syntax error, undefined table or column: a schema that is not
 * keel's), 22 (a value the column cannot hold) and the rest of 23 (other integrity violations). Everything else is
 * about reaching the server (class 08 connection exceptions, 57P0x shutdown, 53 resources, socket errors, timeouts):
 * `store.unavailable`.
 */
export function toStoreError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = String((error as { code?: unknown })?.code ?? '');
  const message = `PostgreSQL run store: ${(error as Error)?.message ?? String(error)}`;
  const data = { sqlState: code };
  if (code === '23505') return new KeelError('store.conflict', message, { cause: error, data });
  if (code === '40001' || code === '40P01') {
    return new KeelError('store.conflict', message, { cause: error, retryable: true, data });
  }
  if (/^(42|22|23)[0-9A-Z]{3}$/.test(code)) {
    return new KeelError('store.invalid', message, {
      cause: error,
      data,
      guidance:
        "The database refused the statement: check that it holds keel's own schema and nothing else changed it.",
    });
  }
  return new KeelError('store.unavailable', message, { cause: error, data });
}
