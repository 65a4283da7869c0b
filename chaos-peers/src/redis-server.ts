// A private Redis for keel's fleet subject: redis-server (from PATH) on a free 127.0.0.1 port, no persistence,
// stopped when the comparison ends.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A running private Redis. */
export interface PrivateRedis {
  readonly url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(),
      );
    });
  });
}

/** Starts `redis-server` and resolves once it accepts connections; rejects when it cannot start. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
