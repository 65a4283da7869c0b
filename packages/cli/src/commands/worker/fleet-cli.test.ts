// `keel submit`, `keel worker` and `keel runs list` as users run them: the built binary, a SQLite store in a scratch
// directory, the test Redis. The fleet test (fleet.test.ts) puts the worker through kills; this one through its
// ordinary life: help, a submitted run listed as queued, taken and finished, and a graceful stop on SIGTERM.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FleetProcess, type WorkerLine, waitForLines } from '../../test-support/fleet-process.js';
import { runKeel } from '../../test-support/keel-cli.js';

const redisUrl = process.env.KEEL_TEST_REDIS_URL;
if (redisUrl === undefined)
  throw new Error('KEEL_TEST_REDIS_URL is not set: the vitest global setup starts Redis');
const directory = mkdtempSync(join(tmpdir(), 'keel-fleet-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const agentName = `desk-${process.pid}-${Date.now().toString(36)}`;
writeFileSync(join(directory, 'desk.yaml'), `name: ${agentName}\ntools: [create_ticket, get_weather]\n`);
const store = join(directory, 'fleet.db');

const keel = (...args: string[]) => runKeel(directory, ...args);

describe('keel submit, keel worker, keel runs list', () => {
  it('each has its own --help', async () => {
    const submit = await keel('submit', '--help');
    expect(submit.code).toBe(0);
    expect(submit.stdout).toContain('keel submit <agent.yaml> "<task>"');
    const worker = await keel('worker', '--help');
    expect(worker.code).toBe(0);
    expect(worker.stdout).toContain('--concurrency N');
    expect(worker.stdout).toContain('SIGTERM');
    expect(worker.stdout).toContain('--policy-state shared|local|closed');
    const all = await keel('--help');
    expect(all.stdout).toContain('keel submit <agent.yaml>');
    expect(all.stdout).toContain('keel worker <agent.yaml>...');
  });

  it('refuses bad input with exit code 2 and says what to fix', async () => {
    expect(await keel('submit', 'desk.yaml')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: keel submit'),
    });
    expect(await keel('submit', 'desk.yaml', '  ', '--store', store, '--redis', redisUrl!)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('The task is empty'),
    });
    expect(
      await keel('submit', 'desk.yaml', 'Hi', '--priority', 'high', '--store', store, '--redis', redisUrl!),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--priority must be an integer from -10 to 10, not "high"'),
    });
    expect(await keel('worker', '--store', store)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: keel worker'),
    });
    expect(await keel('worker', 'desk.yaml', '--concurrency', '0')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--concurrency must be an integer of at least 1'),
    });
    // A Redis that cannot be reached at the start: exit 1 at once, the server named, its password masked.
    const unreachable = await keel(
      'worker',
      'desk.yaml',
      '--store',
      store,
      '--redis',
      'redis://:hunter2@127.0.0.1:1',
    );
    expect(unreachable).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        "cannot reach the fleet's Redis at redis://:[redacted]@127.0.0.1:1 (connect ECONNREFUSED",
      ),
    });
    expect(unreachable.stderr).not.toContain('hunter2');
    // A mistake in an agent file is told first, whatever Redis does.
    writeFileSync(join(directory, 'broken.yaml'), 'name: broken\nlimits: { maxTurns: -1 }\n');
    expect(
      await keel('worker', 'broken.yaml', '--store', store, '--redis', 'redis://127.0.0.1:1'),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('limits.maxTurns'),
    });
    expect(await keel('worker', 'desk.yaml', '--tenant-limit', 'acme=0')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        '--tenant-limit must be N or TENANT=N with N an integer of at least 1, not "acme=0"',
      ),
    });
    expect(await keel('worker', 'desk.yaml', '--policy-state', 'global')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--policy-state must be shared, closed or local, not "global"'),
    });
    expect(await keel('worker', 'desk.yaml', '--bogus')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('keel worker --help'),
    });
  }, 150_000); // nine keel processes, each a few seconds to start on a loaded machine

  it('submits a run that is listed as queued, is taken and finished by a worker, which stops gracefully on SIGTERM', async () => {
    const submitted = await keel(
      'submit',
      'desk.yaml',
      'Create a ticket about the weather in Oslo',
      '--store',
      store,
      '--redis',
      redisUrl!,
      '--json',
    );
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const { runId, status, agentName: named, enqueued } = JSON.parse(submitted.stdout);
    expect({ status, named, enqueued }).toEqual({ status: 'queued', named: agentName, enqueued: true });
    const listed = await keel('runs', 'list', '--status', 'queued', '--store', store);
    expect(listed.stdout).toMatch(new RegExp(`${runId}\\s+queued\\s+${agentName}.*\\s-$`, 'm'));
    expect(listed.stdout).toMatch(/WORKER/);

    const lines: WorkerLine[] = [];
    const worker = new FleetProcess(
      0,
      () => ['worker', 'desk.yaml', '--store', store, '--redis', redisUrl!, '--json'],
      directory,
      (line) => lines.push(line),
    );
    worker.start();
    try {
      await waitForLines(worker, () =>
        lines.some((line) => line.type === 'run-finished' && line.runId === runId),
      );
      expect(lines.map((line) => line.type)).toEqual([
        'worker-ready',
        'run-taken',
        'run-started',
        'run-finished',
      ]);
      expect(lines.at(-1)).toMatchObject({ status: 'completed', stopReason: 'final_answer' });
    } finally {
      await worker.stop();
    }
    expect(worker.exitCode).toBe(0);
    const done = await keel('runs', 'list', '--store', store);
    expect(done.stdout).toMatch(new RegExp(`${runId}\\s+completed`));
  });

  it('cancels a fleet run and answers one through Redis with --redis', async () => {
    const submitted = await keel(
      'submit',
      'desk.yaml',
      'What is the weather in Lyon?',
      '--store',
      store,
      '--redis',
      redisUrl!,
      '--json',
    );
    const { runId } = JSON.parse(submitted.stdout);
    // Nothing is pending in a queued run: the answers are refused before anything is enqueued.
    const refused = await keel(
      'resume',
      runId,
      '--approve',
      `${runId}:1:0`,
      '--store',
      store,
      '--redis',
      redisUrl!,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('not interrupted') });
    const cancelled = await keel('cancel', runId, '--store', store, '--redis', redisUrl!, '--json');
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toEqual({ runId, status: 'cancelled' });
  });
});
