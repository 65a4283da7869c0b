import { KeelError } from '@keel/core';
import { Redis } from 'ioredis';

/** How long `keel worker` waits for the fleet's Redis at start, in milliseconds. */
export const REDIS_CHECK_TIMEOUT_MS = 5_000;

/**
 * Pings the fleet's Redis once, so that a worker that cannot reach it says so and exits 1 instead of printing errors
 * for as long as it runs. Throws `store.unavailable` naming the server (its password masked).
 */
export async function checkRedis(url: string, timeoutMs = REDIS_CHECK_TIMEOUT_MS): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The connection's own failure (ECONNREFUSED, say) comes as an event; the rejection only says it closed.
  let connectionError: Error | undefined;
  client.on('error', (error: Error) => {
    connectionError ??= error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const reason = connectionError ?? (error as Error);
    // KeelError masks the URL's password.
    throw new KeelError(
      'store.unavailable',
      `cannot reach the fleet's Redis at ${url} (${reason.message}); start it, or give --redis`,
      { cause: reason },
    );
  } finally {
    client.disconnect();
  }
}
