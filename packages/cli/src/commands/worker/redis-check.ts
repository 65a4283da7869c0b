import { KeelError } from '@keel/core';
import { Redis } from 'ioredis';

/** How long `keel worker` waits for the fleet's Redis at start, in milliseconds. */
export const REDIS_CHECK_TIMEOUT_MS = 5_000;

/**
 * Pings the fleet's Redis once, so that a worker that cannot reach it says so and exits 1 instead of printing errors
 * for as long as it runs. Throws `store.unavailable` naming the server (its password masked). `signal`: when it
 * aborts (the worker is stopped while it waits), the connection is dropped at once and the check rejects.
 */
export async function checkRedis(
  url: string,
  timeoutMs = REDIS_CHECK_TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted === true) {
    throw new KeelError('run.cancelled', `the check of the fleet's Redis at ${url} was stopped`);
  }
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
  // Stopped while it waits (SIGTERM at the start): the connection goes at once, and nothing is left running.
  const stop = () => client.disconnect();
  signal?.addEventListener('abort', stop, { once: true });
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
    signal?.removeEventListener('abort', stop);
    client.disconnect();
  }
}
