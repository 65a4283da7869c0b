import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { KeelError } from '@keel/core';
import { createApp } from './app.js';
import { loadAssets } from './assets.js';
import { ChangeFeed } from './change-feed.js';
import { type DashboardOptions, resolveDashboardOptions } from './options.js';
import { ResumeTracker } from './resume-tracker.js';
import { RunCatalog } from './run-catalog.js';

/** A dashboard that is serving. */
export interface Dashboard {
  /** Where it listens, such as `http://127.0.0.1:4800`. */
  readonly url: string;
  /** The token API requests must carry. */
  readonly token: string;
  /** Whether the token was made up at start (none was given): print it for the user. */
  readonly tokenGenerated: boolean;
  /** The URL to open: `url` with the token in its fragment (which browsers never send to the server). */
  readonly pageUrl: string;
  /** Resumes started from the page that are still running. */
  readonly resumesInProgress: number;
  /**
   * Stops serving (open pages lose their connection), then waits for the resumes started from the page to finish.
   * The store is not closed: it belongs to the caller.
   */
  close(): Promise<void>;
}

/**
 * Serves the dashboard over a run store: a page listing runs (live), each run's timeline, report, conversation,
 * tool ledger and error, and its pending decisions, answered through `options.resume`. Binds 127.0.0.1 unless told
 * otherwise; a host that is not loopback needs a token. Fails with `config.invalid` for bad options or a port in use.
 *
 * @example
 *   const dashboard = await startDashboard({ store: new SqliteRunStore('.keel/keel.db'), port: 0 });
 *   console.log(dashboard.pageUrl);
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const resolved = resolveDashboardOptions(options);
  const assets = await loadAssets();
  const feed = new ChangeFeed(resolved.store, resolved.pollIntervalMs, resolved.listLimit);
  const resumes = new ResumeTracker(resolved.now);
  const streams = new Set<{ abort(): void }>();
  const app = createApp({
    options: resolved,
    assets,
    catalog: new RunCatalog(resolved.store, resolved.listLimit, resolved.now),
    feed,
    resumes,
    streams,
  });
  const server = createAdaptorServer({ fetch: app.fetch, hostname: resolved.host, port: resolved.port });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new KeelError(
          'config.invalid',
          `Cannot listen on ${resolved.host}:${resolved.port}: ${error.message}`,
          {
            data: { host: resolved.host, port: resolved.port },
            guidance:
              error.code === 'EADDRINUSE'
                ? 'Pick another port with --port N (0 picks a free one).'
                : 'Check --host.',
            cause: error,
          },
        ),
      );
    });
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostPart}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    token: resolved.token,
    tokenGenerated: resolved.tokenGenerated,
    pageUrl: `${url}/#token=${resolved.token}`,
    get resumesInProgress() {
      return resumes.count;
    },
    close() {
      closing ??= (async () => {
        feed.close();
        for (const stream of streams) stream.abort();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ('closeAllConnections' in server) server.closeAllConnections();
        });
        await resumes.settled();
      })();
      return closing;
    },
  };
}
