// Hostile inputs a model (or a prompt injection speaking through it) may send a command tool, one per test.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, rejection } from '../test-support.js';
import { commandTool } from './command-tool.js';

let sandbox: string;
let root: string;

beforeEach(() => {
  sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'keel-hostile-')));
  root = join(sandbox, 'root');
  mkdirSync(root);
  writeFileSync(join(root, 'readme.txt'), 'inside\n');
  writeFileSync(join(sandbox, 'secret.txt'), 'outside secret\n');
});

afterEach(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

const valueInput = {
  type: 'object',
  properties: { value: { type: 'string' } },
  required: ['value'],
} as const;

function printArguments() {
  return commandTool({
    name: 'print_arguments',
    description: 'Prints each argument on its own line',
    input: valueInput,
    command: ['printf', '[%s]\\n', '{value}', 'fixed'],
    root,
  });
}

function catFile() {
  return commandTool({
    name: 'cat_file',
    description: 'Prints a file',
    input: valueInput,
    command: ['cat', '{value:path}'],
    root,
  });
}

describe('commandTool against hostile input', () => {
  it('passes shell metacharacters as one literal argument: nothing is run, nothing is written', async () => {
    const hostile = `; touch pwned && echo $(id) \`id\` | tee pwned2 > pwned3 & rm -rf / #`;
    const output = await callTool(printArguments(), { value: hostile });
    expect(output.stdout).toBe(`[${hostile}]\n[fixed]\n`);
    for (const file of ['pwned', 'pwned2', 'pwned3']) expect(existsSync(join(root, file))).toBe(false);
  });

  it('passes a newline and quotes as part of the one argument', async () => {
    const output = await callTool(printArguments(), { value: `a'b"c\nrm -rf /` });
    expect(output.stdout).toBe(`[a'b"c\nrm -rf /]\n[fixed]\n`);
  });

  it('refuses a value with a NUL byte (it would cut the argument short)', async () => {
    const error = await rejection(callTool(printArguments(), { value: 'safe\0--evil' }));
    expect(error.code).toBe('tool.invalid_input');
  });

  it('refuses a path that climbs out of the root with ..', async () => {
    const error = await rejection(callTool(catFile(), { value: '../secret.txt' }));
    expect(error.code).toBe('tool.permission_denied');
    expect(error.guidance).toContain('inside the working directory');
    expect(JSON.stringify(error.toJSON())).not.toContain('outside secret');
  });

  it('refuses a path that climbs out through a deeper ..', async () => {
    const error = await rejection(callTool(catFile(), { value: 'a/b/../../../secret.txt' }));
    expect(error.code).toBe('tool.permission_denied');
  });

  it('refuses an absolute path outside the root', async () => {
    const error = await rejection(callTool(catFile(), { value: '/etc/passwd' }));
    expect(error.code).toBe('tool.permission_denied');
  });

  it('refuses a symbolic link inside the root that points outside it', async () => {
    symlinkSync(join(sandbox, 'secret.txt'), join(root, 'innocent.txt'));
    const error = await rejection(callTool(catFile(), { value: 'innocent.txt' }));
    expect(error.code).toBe('tool.permission_denied');
  });

  it('refuses a new file below a linked directory that points outside the root', async () => {
    symlinkSync(sandbox, join(root, 'door'));
    const tool = commandTool({
      name: 'touch_file',
      description: 'Creates a file',
      input: valueInput,
      command: ['touch', '{value:path}'],
      root,
    });
    const error = await rejection(callTool(tool, { value: 'door/created.txt' }));
    expect(error.code).toBe('tool.permission_denied');
    expect(existsSync(join(sandbox, 'created.txt'))).toBe(false);
  });

  it('accepts paths that stay inside: a .. that comes back, an absolute path inside, a file yet to be made', async () => {
    mkdirSync(join(root, 'docs'));
    expect((await callTool(catFile(), { value: 'docs/../readme.txt' })).stdout).toBe('inside\n');
    expect((await callTool(catFile(), { value: join(root, 'readme.txt') })).stdout).toBe('inside\n');
    const touch = commandTool({
      name: 'touch_file',
      description: 'Creates a file',
      input: valueInput,
      command: ['touch', '{value:path}'],
      root,
    });
    await callTool(touch, { value: 'docs/new.txt' });
    expect(existsSync(join(root, 'docs', 'new.txt'))).toBe(true);
  });

  it('refuses option injection: --upload-pack=... where git expects a repository', async () => {
    const marker = join(sandbox, 'upload-pack-ran');
    const tool = commandTool({
      name: 'list_remote',
      description: 'Lists the references of a remote repository',
      input: { type: 'object', properties: { repository: { type: 'string' } }, required: ['repository'] },
      command: ['git', 'ls-remote', '{repository}'],
      root,
      timeoutMs: 10_000,
    });
    const error = await rejection(callTool(tool, { repository: `--upload-pack=touch ${marker}` }));
    expect(error.code).toBe('tool.invalid_input');
    expect(error.message).toContain('starts with "-"');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a value that would turn an empty leading placeholder into an option ({a}{b} with a empty)', async () => {
    const tool = commandTool({
      name: 'joined',
      description: 'Joins two values',
      input: {
        type: 'object',
        properties: { first: { type: 'string' }, second: { type: 'string' } },
        required: ['first', 'second'],
      },
      command: ['printf', '[%s]', '{first}{second}'],
      root,
    });
    const error = await rejection(callTool(tool, { first: '', second: '-rf' }));
    expect(error.code).toBe('tool.invalid_input');
  });

  it('passes a path starting with - as its absolute path, so it cannot be read as an option', async () => {
    writeFileSync(join(root, '-n'), 'dash file\n');
    expect((await callTool(catFile(), { value: '-n' })).stdout).toBe('dash file\n');
  });

  it('accepts a leading - after a literal -- (the program reads no options past it)', async () => {
    writeFileSync(join(root, '-x'), '');
    const tool = commandTool({
      name: 'list',
      description: 'Lists a name',
      input: valueInput,
      command: ['ls', '-d', '--', '{value}'],
      root,
    });
    expect((await callTool(tool, { value: '-x' })).stdout).toBe('-x\n');
  });
});
