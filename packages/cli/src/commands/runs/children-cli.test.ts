// Agents made of agents through the built CLI: examples/triage.yaml calls research as a tool and hands over to
// support, offline on the simulated provider; `keel runs show --json` lists the child runs, and an approval a child
// waits for is answered with `keel resume <parent> --approve <child key>`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runKeel } from '../../test-support/keel-cli.js';

const TRIAGE = fileURLToPath(new URL('../../../../../examples/triage.yaml', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'keel-children-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface Shown {
  parentRunId: string | null;
  children: { runId: string; agentName: string; kind: string; status: string }[];
  run: { state: { report: { children?: { answeredBy?: string } } } };
}

async function show(runId: string): Promise<Shown> {
  const shown = await runKeel(directory, 'runs', 'show', runId, '--json');
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as Shown;
}

describe('keel run examples/triage.yaml: a tree of agents', () => {
  it('completes offline, and keel runs show lists its children, each linked to its parent', {
    timeout: 120_000,
  }, async () => {
    const ran = await runKeel(
      directory,
      'run',
      TRIAGE,
      'Research the refund policy, then get support to open a ticket for order 7',
      '--json',
    );
    expect(ran.code, ran.stderr).toBe(0);
    const result = JSON.parse(ran.stdout) as { runId: string; status: string; stopDetail?: string };
    expect(result.status).toBe('completed');
    const parent = await show(result.runId);
    expect(parent.parentRunId).toBeNull();
    expect(parent.children.map((child) => [child.agentName, child.kind, child.status])).toEqual([
      ['research', 'tool', 'completed'],
      ['support', 'handoff', 'completed'],
    ]);
    expect(parent.run.state.report.children?.answeredBy).toBe('support');
    const child = await show(parent.children[0]!.runId);
    expect(child.parentRunId).toBe(result.runId);
  });

  it("answers a child's approval through the parent: keel resume <parent> --approve <child key>", {
    timeout: 120_000,
  }, async () => {
    const ran = await runKeel(
      directory,
      'run',
      TRIAGE,
      'Urgent: research the refund policy, then get support to open an urgent ticket for order 7',
      '--json',
    );
    expect(ran.code, ran.stderr).toBe(3);
    const result = JSON.parse(ran.stdout) as {
      runId: string;
      pending: { idempotencyKey: string; childRunId?: string }[];
    };
    const [waiting] = result.pending;
    expect(waiting?.childRunId).toBe(`${result.runId}:1:1/transfer_to_support`);
    const resumed = await runKeel(
      directory,
      'resume',
      result.runId,
      '--approve',
      waiting!.idempotencyKey,
      '--json',
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const parent = await show(result.runId);
    expect(parent.children.map((child) => child.status)).toEqual(['completed', 'completed']);
  });
});
