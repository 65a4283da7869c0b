// Starts and stops a private Redis 7 instance for keel's tests and benchmarks: 127.0.0.1 only, no persistence, a
// port of its own. Used by the vitest global setup and by tests that stop Redis on purpose (outage tests).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';

export interface RedisInstance {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Stops the server (SIGTERM, then SIGKILL after 2 s) and resolves when it has exited. */
  stop(): Promise<void>;
}

function redisServerPath(): string {
  try {
    return execFileSync('bash', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('redis-server is not installed (run scripts/install-services.sh)');
  }
}

/** Starts `redis-server` on 127.0.0.1:`port` and resolves once it accepts connections. */
export function startRedis(port: number): Promise<RedisInstance> {
  const child = spawn(
    redisServerPath(),
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ url: `redis://127.0.0.1:${port}`, port, process: child, stop });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)),
    );
  });
}
