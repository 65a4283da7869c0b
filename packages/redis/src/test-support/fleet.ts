// Runs a fleet of real child processes (test-support/fleet-child.ts, built) against one Redis and one server, starts
// them at once, and collects their reports.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FleetChildReport, FleetChildSettings } from './fleet-child.js';

const CHILD_PATH = fileURLToPath(new URL('../../dist/test-support/fleet-child.js', import.meta.url));

interface RunningChild {
  ready: Promise<void>;
  go(): void;
  report: Promise<FleetChildReport>;
}

function startChild(settings: FleetChildSettings): RunningChild {
  const child = spawn(process.execPath, [CHILD_PATH, JSON.stringify(settings)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const report = new Promise<FleetChildReport>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.split('\n').find((text) => text.startsWith('{'));
      if (code !== 0 || line === undefined)
        reject(new Error(`fleet child ${settings.child} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(line) as FleetChildReport);
    });
  });
  // A child that dies before it is ready fails the wait for readiness too.
  report.catch(() => markReady());
  return { ready, go: () => child.stdin.end('go\n'), report };
}

/** Starts one child per settings, waits until all are connected, starts them together, and returns their reports. */
export async function runFleet(settings: readonly FleetChildSettings[]): Promise<FleetChildReport[]> {
  const children = settings.map(startChild);
  await Promise.all(children.map((child) => child.ready));
  for (const child of children) child.go();
  return Promise.all(children.map((child) => child.report));
}
