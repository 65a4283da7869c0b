// A dangling symbolic link inside the root whose target lies outside: a program writing through it would create a
// file outside the root. The path is confined where the link leads, so the call is refused before the program runs.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, rejection } from '../test-support.js';
import { commandTool } from './command-tool.js';

let sandbox: string;
let root: string;

beforeEach(() => {
  sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'keel-links-')));
  root = join(sandbox, 'root');
  mkdirSync(root);
});

afterEach(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

/** A tool whose program writes "written" to the path it is given, through whatever links the path holds. */
function writeFile() {
  return commandTool({
    name: 'write_file',
    description: 'Writes a file',
    input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    command: [
      process.execPath,
      '-e',
      'require("node:fs").writeFileSync(process.argv[1], "written")',
      '{path:path}',
    ],
    root,
  });
}

describe('commandTool: dangling symbolic links', () => {
  it('refuses a dangling link that points outside the root; no file is created there', async () => {
    symlinkSync(join(sandbox, 'created.txt'), join(root, 'out.txt'));
    const error = await rejection(callTool(writeFile(), { path: 'out.txt' }));
    expect(error.code).toBe('tool.permission_denied');
    expect(existsSync(join(sandbox, 'created.txt'))).toBe(false);
  });

  it('refuses a relative dangling link that climbs out, and a chain of dangling links', async () => {
    symlinkSync('../climbed.txt', join(root, 'up.txt'));
    symlinkSync('up.txt', join(root, 'chain.txt'));
    for (const path of ['up.txt', 'chain.txt']) {
      const error = await rejection(callTool(writeFile(), { path }));
      expect(error.code).toBe('tool.permission_denied');
    }
    expect(existsSync(join(sandbox, 'climbed.txt'))).toBe(false);
  });

  it('refuses a path below a dangling directory link that points outside', async () => {
    symlinkSync(join(sandbox, 'later'), join(root, 'door'));
    const error = await rejection(callTool(writeFile(), { path: 'door/created.txt' }));
    expect(error.code).toBe('tool.permission_denied');
    expect(existsSync(join(sandbox, 'later'))).toBe(false);
  });

  it('refuses a dangling link loop as unresolvable', async () => {
    symlinkSync('b', join(root, 'a'));
    symlinkSync('a', join(root, 'b'));
    const error = await rejection(callTool(writeFile(), { path: 'a' }));
    expect(error.code).toBe('tool.invalid_input');
  });

  it('writes through a dangling link whose target stays inside the root', async () => {
    mkdirSync(join(root, 'logs'));
    symlinkSync('logs/today.log', join(root, 'current.log'));
    await callTool(writeFile(), { path: 'current.log' });
    expect(readFileSync(join(root, 'logs', 'today.log'), 'utf8')).toBe('written');
  });
});
