import { throwOptionError } from '@keel/core/adapter';
import type pg from 'pg';

/** Options of {@link PostgresRunStore}. */
export interface PostgresRunStoreOptions {
  /** A connection string such as `postgres://user@127.0.0.1:5432/keel`. Required unless `pool` is given. */
  connectionString?: string;
  /** An existing pool to use instead; the store will not end it on close. */
  pool?: pg.Pool;
  /** Most connections the store opens. Defaults to 10. */
  maxConnections?: number;
  /** Longest wait for a connection. Defaults to 5000. */
  connectTimeoutMs?: number;
  /** Longest a single statement may run. Defaults to 10000. */
  statementTimeoutMs?: number;
}

const OPTION_NAMES = ['connectionString', 'pool', 'maxConnections', 'connectTimeoutMs', 'statementTimeoutMs'];

/** Checks the constructor's options: `config.invalid` names the option at fault and the known ones. */
export function checkOptions(options: PostgresRunStoreOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throwOptionError({
      where: 'PostgresRunStore',
      option: 'options',
      message: `options must be an object such as { connectionString: 'postgres://user@host/db' }; known options: ${OPTION_NAMES.join(', ')}`,
    });
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key))
      throwOptionError({
        where: 'PostgresRunStore',
        option: 'unknown',
        message: `unknown option "${key}"; known options: ${OPTION_NAMES.join(', ')}`,
      });
  }
  const { pool, connectionString } = options;
  if (pool !== undefined) {
    if (typeof (pool as { query?: unknown } | null)?.query !== 'function') {
      throwOptionError({ where: 'PostgresRunStore', option: 'pool', message: 'pool must be a pg.Pool' });
    }
    if (connectionString !== undefined)
      throwOptionError({
        where: 'PostgresRunStore',
        option: 'pass',
        message: 'pass either connectionString or pool, not both',
      });
  } else if (typeof connectionString !== 'string' || connectionString === '') {
    throwOptionError({
      where: 'PostgresRunStore',
      option: 'connectionString',
      message: 'connectionString must be a connection string such as postgres://user@host/db (or pass pool)',
    });
  }
  for (const key of ['maxConnections', 'connectTimeoutMs', 'statementTimeoutMs'] as const) {
    const value = options[key];
    if (value !== undefined && (!Number.isInteger(value) || value <= 0 || value > 2_147_483_647)) {
      throwOptionError({
        where: 'PostgresRunStore',
        option: key,
        message: `${key} must be a positive integer, not ${String(value)}`,
      });
    }
  }
}
