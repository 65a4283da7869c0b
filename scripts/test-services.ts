// vitest global setup: starts the private PostgreSQL and Redis instances the tests use, and stops them afterwards.
//
// Each run gets a free loopback port and a data directory of its own, so that a leftover instance or a suite running
// in parallel never collides with it. KEEL_POSTGRES_PORT and KEEL_POSTGRES_DIR pin either (a directory given that way
// is kept at the end); KEEL_TEST_POSTGRES_URL skips all of this and uses that server. Redis likewise gets a free port
// (KEEL_TEST_REDIS_URL skips it); tests that stop Redis on purpose start their own with `startRedis`.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from './redis.js';

const script = fileURLToPath(new URL('./postgres.sh', import.meta.url));
const DIRECTORY_PREFIX = 'keel-postgres-test-';

/** A port that was free on 127.0.0.1 a moment ago: the kernel picks it for a listener, which is then closed. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port assigned')),
      );
    });
  });
}

function postgres(action: 'start' | 'stop', port: string, directory: string): string {
  return execFileSync('bash', [script, action, port], {
    encoding: 'utf8',
    env: { ...process.env, KEEL_POSTGRES_DIR: directory },
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops and removes instances left by earlier runs whose vitest process died before its teardown. */
function removeAbandoned(): void {
  for (const name of readdirSync(tmpdir())) {
    const owner = /^keel-postgres-test-(\d+)-/.exec(name)?.[1];
    if (owner === undefined || isAlive(Number(owner))) continue;
    const directory = join(tmpdir(), name);
    try {
      postgres('stop', '0', directory);
    } catch {
      // Half-initialised or already stopped: removing the directory is all that is left to do.
    }
    rmSync(directory, { recursive: true, force: true });
  }
}

async function setupPostgres(): Promise<() => void> {
  if (process.env.KEEL_TEST_POSTGRES_URL !== undefined) return () => {};
  removeAbandoned();
  const port = process.env.KEEL_POSTGRES_PORT ?? String(await freeLoopbackPort());
  const given = process.env.KEEL_POSTGRES_DIR;
  // Not created here: postgres.sh creates it and hands it to the postgres user.
  const directory = given ?? join(tmpdir(), `${DIRECTORY_PREFIX}${process.pid}-${randomUUID().slice(0, 8)}`);
  let url: string;
  try {
    url = postgres('start', port, directory).trim().split('\n').at(-1)!;
  } catch (error) {
    if (given === undefined) rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  process.env.KEEL_TEST_POSTGRES_URL = url;
  return () => {
    try {
      postgres('stop', port, directory);
    } finally {
      if (given === undefined) rmSync(directory, { recursive: true, force: true });
      delete process.env.KEEL_TEST_POSTGRES_URL;
    }
  };
}

async function setupRedis(): Promise<() => Promise<void>> {
  if (process.env.KEEL_TEST_REDIS_URL !== undefined) return async () => {};
  const redis = await startRedis(await freeLoopbackPort());
  process.env.KEEL_TEST_REDIS_URL = redis.url;
  return async () => {
    await redis.stop();
    delete process.env.KEEL_TEST_REDIS_URL;
  };
}

export async function setup(): Promise<() => Promise<void>> {
  const stopPostgres = await setupPostgres();
  let stopRedis: () => Promise<void>;
  try {
    stopRedis = await setupRedis();
  } catch (error) {
    stopPostgres();
    throw error;
  }
  return async () => {
    try {
      await stopRedis();
    } finally {
      stopPostgres();
    }
  };
}
