import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { keelInProcess } from '../test-support/keel-cli.js';
import { COMMANDS } from './command-table.js';

const cwd = tmpdir();

describe('the command table', () => {
  it('gives every command and subcommand its own --help', async () => {
    const helps = new Map<string, string>();
    for (const entry of COMMANDS) {
      const outcome = await keelInProcess([...entry.name.split(' '), '--help'], { cwd });
      expect(outcome.code, entry.name).toBe(0);
      expect(outcome.stdout, entry.name).toContain(`keel ${entry.name}`);
      helps.set(entry.name, outcome.stdout);
    }
    expect(new Set(helps.values()).size).toBe(COMMANDS.length);
    const general = await keelInProcess(['--help'], { cwd });
    for (const [name, help] of helps) expect(help, name).not.toBe(general.stdout);
    expect([...helps.keys()]).toEqual(
      expect.arrayContaining([
        'runs list',
        'runs show',
        'sessions list',
        'sessions show',
        'sessions delete',
        'cancel',
      ]),
    );
  });

  it('refuses the options a command does not take, naming them all (exit 2)', async () => {
    const outcome = await keelInProcess(['runs', 'list', '--approve', 'x', '--faults', 'y'], { cwd });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(
      /config\.invalid: Unknown options '--approve', '--faults' for keel runs list/,
    );
    expect(outcome.stderr).toContain('keel runs list --help');
    const cancel = await keelInProcess(['cancel', 'run-1', '--approve=k'], { cwd });
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toMatch(/Unknown option '--approve' for keel cancel/);
    const show = await keelInProcess(['sessions', 'show', 'chat-1', '--limit', '3'], { cwd });
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(/Unknown option '--limit' for keel sessions show/);
  });

  it('prints the version of package.json for keel --version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const outcome = await keelInProcess(['--version'], { cwd });
    expect(outcome).toEqual({ code: 0, stdout: version, stderr: '' });
  });

  it('gives the usage of a group for a missing or unknown subcommand, and its help for keel runs --help', async () => {
    const missing = await keelInProcess(['sessions'], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('keel sessions delete <session-id>');
    const unknown = await keelInProcess(['runs', 'frobnicate'], { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('keel runs show <run-id>');
    const help = await keelInProcess(['runs', '--help'], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('keel runs list --help');
  });
});
