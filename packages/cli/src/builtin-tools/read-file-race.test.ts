// read_file against an attacker who swaps symbolic links in and out while it reads: a real child process renames a
// link over the file (and over a directory on the path) in a tight loop, while this process reads thousands of
// times. Whatever the timing, no read may return the outside file.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError, type Tool, type ToolContext } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinTools } from './builtin-tools.js';

const SECRET = 'OUTSIDE SECRET';
const READS = 3_000;
const PARALLEL_READS = 8;

// Swaps `agent/file.txt` between a regular file and a link to the secret, and `agent/dir` between a directory and a
// link to the secret's directory (both links by rename, so each path always exists or is mid-rename). It yields to
// its event loop between bursts so that the end of its stdin (the test is over) stops it.
const SWAPPER = `
const { lstatSync, renameSync, symlinkSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const [agent, outside] = process.argv.slice(1);
const file = join(agent, 'file.txt');
const dir = join(agent, 'dir');
const aside = join(agent, '.dir-aside');
let stop = false;
// Each state lasts a few system calls, so that reads meet every one of them.
const hold = () => { for (let index = 0; index < 10; index++) lstatSync(agent); };
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();
function burst() {
  for (let index = 0; index < 50; index++) {
    symlinkSync(join(outside, 'file.txt'), join(agent, '.link'));
    renameSync(join(agent, '.link'), file);
    hold();
    writeFileSync(join(agent, '.real'), 'inside');
    renameSync(join(agent, '.real'), file);
    hold();
    renameSync(dir, aside);
    symlinkSync(outside, join(agent, '.dir-link'));
    renameSync(join(agent, '.dir-link'), dir);
    hold();
    rmSync(dir);
    renameSync(aside, dir);
    hold();
  }
  if (stop) process.exit(0);
  setImmediate(burst);
}
process.stdout.write('ready\\n');
burst();
`;

const context: ToolContext = {
  signal: new AbortController().signal,
  idempotencyKey: 'run:1:0',
  runId: 'run',
  step: 1,
  callIndex: 0,
  attempt: 1,
};

const directory = mkdtempSync(join(tmpdir(), 'keel-race-'));
let swapper: ChildProcess | undefined;
afterAll(() => {
  swapper?.stdin?.end();
  if (swapper?.pid !== undefined && swapper.exitCode === null) swapper.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});

describe('read_file while symbolic links are swapped in and out', () => {
  it('never returns the outside file', async () => {
    const agent = join(directory, 'agent');
    const outside = join(directory, 'outside');
    mkdirSync(join(agent, 'dir'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(agent, 'file.txt'), 'inside');
    writeFileSync(join(agent, 'dir', 'file.txt'), 'inside');
    writeFileSync(join(outside, 'file.txt'), SECRET);
    const readFile = builtinTools({
      filesDirectory: agent,
      outboxPath: join(directory, 'outbox.jsonl'),
    }).get('read_file') as Tool;

    swapper = spawn(process.execPath, ['-e', SWAPPER, agent, outside], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => swapper!.stdout!.once('data', () => resolve()));

    const outcomes = new Map<string, number>();
    const count = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    const readOnce = async (path: string) => {
      try {
        const { content } = (await readFile.execute({ path }, context)) as { content: string };
        count(content === SECRET ? `${path}: LEAKED` : `${path}: read`);
      } catch (error) {
        count(`${path}: ${KeelError.isInstance(error) ? error.code : `not a KeelError (${String(error)})`}`);
      }
    };
    // The race must be met in both states for the test to mean anything; a loaded machine may schedule the swapper
    // rarely, so reading goes on past READS (up to ten times as many) until every state has been seen.
    const states = [
      'file.txt: read',
      'file.txt: tool.permission_denied',
      'dir/file.txt: read',
      'dir/file.txt: tool.permission_denied',
    ];
    const allStatesMet = () => states.every((state) => outcomes.has(state));
    for (let index = 0; index < READS * 10 && (index < READS || !allStatesMet()); index += PARALLEL_READS) {
      await Promise.all(
        Array.from({ length: PARALLEL_READS }, (_, offset) =>
          readOnce((index + offset) % 2 === 0 ? 'file.txt' : 'dir/file.txt'),
        ),
      );
    }
    swapper.stdin!.end();

    const summary = Object.fromEntries([...outcomes].sort());
    console.log(`read_file race: ${JSON.stringify(summary)}`);
    expect(
      [...outcomes.keys()].filter((outcome) => outcome.endsWith('LEAKED')),
      JSON.stringify(summary),
    ).toEqual([]);
    // Both states were met: the race was real.
    expect(outcomes.get('file.txt: read') ?? 0, JSON.stringify(summary)).toBeGreaterThan(0);
    expect(outcomes.get('file.txt: tool.permission_denied') ?? 0, JSON.stringify(summary)).toBeGreaterThan(0);
    expect(outcomes.get('dir/file.txt: read') ?? 0, JSON.stringify(summary)).toBeGreaterThan(0);
    expect(
      outcomes.get('dir/file.txt: tool.permission_denied') ?? 0,
      JSON.stringify(summary),
    ).toBeGreaterThan(0);
    // Every refusal is a typed error.
    expect([...outcomes.keys()].filter((outcome) => outcome.includes('not a KeelError'))).toEqual([]);
  }, 60_000);
});
