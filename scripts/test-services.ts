// vitest global setup: starts the private PostgreSQL instance the store tests use, and stops it afterwards.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./postgres.sh', import.meta.url));
const port = process.env.KEEL_POSTGRES_PORT ?? '54329';

export function setup(): () => void {
  if (process.env.KEEL_TEST_POSTGRES_URL !== undefined) return () => {};
  const output = execFileSync('bash', [script, 'start', port], { encoding: 'utf8' });
  const url = output.trim().split('\n').at(-1)!;
  process.env.KEEL_TEST_POSTGRES_URL = url;
  return () => {
    execFileSync('bash', [script, 'stop', port]);
  };
}
