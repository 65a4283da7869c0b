import { KeelError } from '@keel/core';
import { Redis } from 'ioredis';
import { settlesBy } from './bounded.js';

/** How a fleet reaches Redis: a URL such as `redis://127.0.0.1:6379`, or an ioredis client of the caller's. */
export type RedisConnection = string | Redis;

/** A Redis client for a fleet part, and whether the part owns it (and so closes it). */
export interface OpenedRedis {
  readonly client: Redis;
  readonly owned: boolean;
}

/**
 * Opens the client a connection names, with `maxRetriesPerRequest: null`. BullMQ's workers block on Redis and need
 * it: with `blocking`, a client passed in without it is refused. Throws `config.invalid` for anything else than a
 * `redis://` or `rediss://` URL or an ioredis client.
 */
export function openRedis(connection: RedisConnection, where: string, blocking: boolean): OpenedRedis {
  if (typeof connection === 'object' && connection !== null && typeof connection.duplicate === 'function') {
    if (blocking && connection.options?.maxRetriesPerRequest !== null) {
      throw new KeelError(
        'config.invalid',
        `${where}: redis: the ioredis client passed in must have maxRetriesPerRequest: null (BullMQ's workers ` +
          'block on Redis), such as new Redis(url, { maxRetriesPerRequest: null })',
        { data: { where } },
      );
    }
    return { client: connection, owned: false };
  }
  if (typeof connection !== 'string' || !/^rediss?:\/\/[^/\s]+/.test(connection)) {
    throw new KeelError(
      'config.invalid',
      `${where}: redis must be a redis:// URL (such as redis://127.0.0.1:6379) or an ioredis client`,
      { data: { where } },
    );
  }
  return { client: new Redis(connection, { maxRetriesPerRequest: null, lazyConnect: false }), owned: true };
}

/**
 * Closes a client the part owns, politely (QUIT) until `deadlineMs` (a `Date.now()` time), then by dropping the
 * connection: commands still waiting for a Redis that is down are rejected. Lets a caller's client be.
 */
export async function closeRedis(opened: OpenedRedis, deadlineMs: number): Promise<void> {
  if (!opened.owned) return;
  await settlesBy(opened.client.quit(), deadlineMs);
  if (opened.client.status !== 'end') opened.client.disconnect();
}
