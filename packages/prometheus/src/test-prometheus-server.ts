// Test helper (not built, not exported): a real Prometheus server (Debian's /usr/bin/prometheus) on a free loopback
// port, with a generated configuration and a short scrape interval, stopped and removed afterwards.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS_BINARY = process.env.KEEL_PROMETHEUS_BIN ?? '/usr/bin/prometheus';
export const PROMTOOL_BINARY = process.env.KEEL_PROMTOOL_BIN ?? '/usr/bin/promtool';

/** One series of an instant query's answer. */
export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

export interface PrometheusServer {
  readonly url: string;
  /** Evaluates a PromQL expression now (Prometheus' HTTP API, `/api/v1/query`). */
  query(expression: string): Promise<Sample[]>;
  /** Queries until `accept` holds for the answer (or `timeoutMs` passes, which throws with the last answer). */
  waitFor(expression: string, accept: (samples: Sample[]) => boolean, timeoutMs?: number): Promise<Sample[]>;
  stop(): Promise<void>;
}

/** A port that was free on 127.0.0.1 a moment ago. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Starts Prometheus scraping `targets` (`host:port`, path `/metrics`) every `scrapeIntervalMs`. */
export async function startPrometheus(
  targets: readonly string[],
  scrapeIntervalMs = 200,
): Promise<PrometheusServer> {
  const directory = mkdtempSync(join(tmpdir(), 'keel-prometheus-test-'));
  const port = await freeLoopbackPort();
  const config = [
    'global:',
    `  scrape_interval: ${scrapeIntervalMs}ms`,
    `  scrape_timeout: ${scrapeIntervalMs}ms`,
    'scrape_configs:',
    '  - job_name: keel',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
    '',
  ].join('\n');
  writeFileSync(join(directory, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    PROMETHEUS_BINARY,
    [
      `--config.file=${join(directory, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(directory, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(directory, { recursive: true, force: true });
  };
  const poll = async <T>(
    what: string,
    attempt: () => Promise<T | undefined>,
    timeoutMs: number,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${log}`);
      const value = await attempt().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`prometheus: gave up waiting for ${what}; its log: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  try {
    await poll('readiness', async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined), 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const query = async (expression: string): Promise<Sample[]> => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success') throw new Error(`query ${expression} failed: ${body.error}`);
    return (body.data?.result ?? []).map((entry) => ({
      metric: entry.metric,
      value: Number(entry.value[1]),
    }));
  };
  return {
    url,
    query,
    async waitFor(expression, accept, timeoutMs = 15_000) {
      let last: Sample[] = [];
      try {
        return await poll(
          expression,
          async () => {
            last = await query(expression);
            return accept(last) ? last : undefined;
          },
          timeoutMs,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}; last answer: ${JSON.stringify(last)}`);
      }
    },
    stop,
  };
}
