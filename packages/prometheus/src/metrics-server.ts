import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KeelError } from '@keel/core';
import type { Registry } from 'prom-client';
import { metricsHandler } from './metrics-handler.js';

/** Where {@link serveMetrics} listens. */
export interface ServeOptions {
  /** The TCP port; 0 picks a free one. Defaults to 9464 (OpenTelemetry's Prometheus exporter port). */
  port?: number;
  /** The address to listen on. Defaults to `127.0.0.1`; use `0.0.0.0` for a Prometheus on another host. */
  host?: string;
}

/** A running `/metrics` endpoint. */
export interface MetricsServer {
  /** Such as `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening, closes open connections, and resolves once closed. */
  close(): Promise<void>;
}

/** Serves `GET /metrics` for a registry. Rejects with `config.invalid` for a bad port, `network.connection` when the port is taken. */
export async function serveMetrics(registry: Registry, options: ServeOptions = {}): Promise<MetricsServer> {
  const port = options.port ?? 9464;
  const host = options.host ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new KeelError(
      'config.invalid',
      `metrics port must be an integer from 0 to 65535, not ${String(port)}`,
      {
        data: { option: 'port' },
      },
    );
  }
  if (typeof host !== 'string' || host === '') {
    throw new KeelError('config.invalid', 'metrics host must be a non-empty string such as 127.0.0.1', {
      data: { option: 'host' },
    });
  }
  const server = createServer(metricsHandler(registry));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new KeelError('network.connection', `Cannot serve metrics on ${host}:${port}: ${error.message}`, {
          cause: error,
          data: { systemCode: error.code ?? null },
          guidance: 'Choose another port (--metrics-port), or stop what listens on it.',
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
