// `keel worker` stopped by SIGTERM at once: the instant it says it is ready (its BullMQ workers and Redis connections
// still starting), and before it is ready (while it waits for Redis at its start). Real processes of the built CLI,
// the test Redis, a SQLite store. Each must exit 0, soon, with nothing unhandled on stderr.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FleetProcess } from '../../test-support/fleet-process.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');
const directory = mkdtempSync(join(tmpdir(), 'keel-worker-stop-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const agentName = `desk-${process.pid}-${Date.now().toString(36)}`;
writeFileSync(join(directory, 'desk.yaml'), `name: ${agentName}\ntools: [create_ticket, get_weather]\n`);
const store = join(directory, 'fleet.db');
// Generous: the machine may be shared. A worker that stops gracefully exits in well under a second; the bug this
// guards against held it for about 15 s.
const EXIT_BOUND_MS = 10_000;

/** Starts a worker on `redis` and sends SIGTERM when `when` says so; resolves with how it ended. */
async function stopped(
  redis: string,
  when: (worker: FleetProcess, type: string | undefined) => boolean,
  onStart?: (worker: FleetProcess) => void,
): Promise<{ code: number | null; stderr: string; exitedInMs: number }> {
  let signalledAtMs = 0;
  const worker: FleetProcess = new FleetProcess(
    0,
    () => ['worker', 'desk.yaml', '--store', store, '--redis', redis, '--concurrency', '4', '--json'],
    directory,
    (line) => {
      if (signalledAtMs === 0 && when(worker, line.type)) {
        signalledAtMs = Date.now();
        void worker.stop();
      }
    },
  );
  worker.start();
  onStart?.(worker);
  await worker.waitForExit();
  return { code: worker.exitCode, stderr: worker.stderr, exitedInMs: Date.now() - signalledAtMs };
}

describe('keel worker stopped by SIGTERM just after it starts', () => {
  it('exits 0 soon when SIGTERM comes the instant it is ready, every time', async () => {
    const endings: Array<{ code: number | null; stderr: string; exitedInMs: number }> = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      endings.push(await stopped(redisUrl!, (_worker, type) => type === 'worker-ready'));
    }
    for (const ending of endings) {
      expect(ending.stderr).toBe('');
      expect(ending.code).toBe(0);
      expect(ending.exitedInMs).toBeLessThan(EXIT_BOUND_MS);
    }
  }, 120_000);

  it('exits 0 soon when SIGTERM comes before it is ready (while it waits for Redis)', async () => {
    // A "Redis" that takes the connection and never answers: the worker is still checking it when SIGTERM comes.
    let signal: (() => void) | undefined;
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      signal?.();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      let signalledAtMs = 0;
      const ending = await stopped(
        `redis://127.0.0.1:${port}`,
        () => false,
        (worker) => {
          // Once, at the first connection (the worker opens several).
          signal = () => {
            signal = undefined;
            signalledAtMs = Date.now();
            void worker.stop();
          };
        },
      );
      expect(ending.stderr).toBe('');
      expect(ending.code).toBe(0);
      // Before the fix the signal killed it (exit code null, signal SIGTERM). Its connections to the silent server
      // take ioredis up to 2 s to drop.
      expect(signalledAtMs).toBeGreaterThan(0);
      expect(Date.now() - signalledAtMs).toBeLessThan(EXIT_BOUND_MS);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 60_000);
});
