// `keel resume --wait` on a run whose lease another process holds: the CLI in-process, on a real SQLite store, with
// a fake clock for the agent and for the wait, so that 30 s of lease pass in no time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@keel/core/testing';
import { SqliteRunStore } from '@keel/store-sqlite';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../main.js';
import type { Output } from '../../output/output.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-wait-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'model: simulated:sim-primary',
    'tools: [create_ticket]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);
const storePath = join(directory, '.keel', 'keel.db');

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    colour: false,
    out: (line) => stdout.push(line),
    error: (line) => stderr.push(line),
  };
}

/** A run waiting for approval, whose lease a process that died (`dead-owner`) holds for `leaseMs` more. */
async function heldRun(clock: FakeClock, leaseMs: number): Promise<{ runId: string; key: string }> {
  const output = capture();
  expect(
    await main(
      ['run', 'support.yaml', 'Open an urgent ticket: fire', '--json'],
      {},
      output,
      directory,
      clock,
    ),
  ).toBe(3);
  const result = JSON.parse(output.stdout.join('\n'));
  const store = new SqliteRunStore(storePath);
  await store.acquireLease(result.runId, 'dead-owner', leaseMs, clock.now());
  await store.close();
  return { runId: result.runId, key: result.pending[0].idempotencyKey };
}

describe('keel resume --wait', () => {
  it('waits for a dead owner lease to end, saying how long is left, then resumes', async () => {
    const clock = new FakeClock();
    const { runId, key } = await heldRun(clock, 30_000);
    const output = capture();
    const exit = main(['resume', runId, '--wait', '--approve', key, '--json'], {}, output, directory, clock);
    await vi.waitFor(() => expect(output.stderr.length).toBeGreaterThan(0));
    expect(output.stderr[0]).toMatch(
      new RegExp(
        `^waiting for run ${runId}: its lease \\(owner dead-owner\\) ends in 30 s, at \\d\\d:\\d\\d:\\d\\d`,
      ),
    );
    await clock.advance(12_000);
    expect(output.stderr.at(-1)).toMatch(/^ {2}20 s left$/);
    await clock.advance(18_100);
    expect(await exit).toBe(0);
    expect(JSON.parse(output.stdout.join('\n'))).toMatchObject({ runId, status: 'completed' });
    expect(output.stderr.slice(1)).toEqual([
      '  25 s left',
      '  20 s left',
      '  15 s left',
      '  10 s left',
      '  5 s left',
    ]);
  });

  it('stops waiting when the owner renews its lease: the run is alive', async () => {
    const clock = new FakeClock();
    const { runId, key } = await heldRun(clock, 10_000);
    const output = capture();
    const exit = main(['resume', runId, '--wait', '--approve', key], {}, output, directory, clock);
    await vi.waitFor(() => expect(output.stderr.length).toBeGreaterThan(0));
    const store = new SqliteRunStore(storePath);
    await store.acquireLease(runId, 'dead-owner', 30_000, clock.now() + 5_000);
    await store.close();
    await clock.advance(10_100);
    expect(await exit).toBe(1);
    expect(output.stderr.at(-2)).toMatch(
      new RegExp(
        `^store\\.conflict: Run ${runId} is still held: its lease \\(owner dead-owner\\) was renewed while keel waited; it now ends in 25 s`,
      ),
    );
    expect(output.stderr.at(-1)).toMatch(new RegExp(`keel cancel ${runId}`));
  });

  it('does not wait for a lease that ends after its limit of 10 minutes', async () => {
    const clock = new FakeClock();
    const { runId, key } = await heldRun(clock, 3_600_000);
    const output = capture();
    expect(await main(['resume', runId, '--wait', '--approve', key], {}, output, directory, clock)).toBe(1);
    expect(output.stderr[0]).toMatch(
      /its lease ends in 3600 s, at \d\d:\d\d:\d\d, later than --wait waits \(600 s\)/,
    );
  });
});
