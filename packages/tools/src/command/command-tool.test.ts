import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, rejection } from '../test-support.js';
import { type CommandToolOptions, commandTool } from './command-tool.js';

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-command-')));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const textInput = {
  type: 'object',
  properties: { text: { type: 'string' }, count: { type: 'integer' } },
  required: ['text'],
  additionalProperties: false,
} as const;

function echo(extra: Partial<CommandToolOptions<unknown>> = {}) {
  return commandTool({
    name: 'echo_text',
    description: 'Prints text',
    input: textInput,
    command: ['printf', '%s\\n', '{text}'],
    root,
    ...extra,
  });
}

describe('commandTool: running a program', () => {
  it('fills a placeholder from the validated input and returns exit code, stdout and stderr', async () => {
    const output = await callTool(echo(), { text: 'hello world' });
    expect(output).toEqual({ exitCode: 0, stdout: 'hello world\n', stderr: '' });
  });

  it('keeps a value inside the one argument it shares with text (--name={value})', async () => {
    const tool = echo({ command: ['printf', '%s|', 'count={count}', 'x{text}y'] });
    const output = await callTool(tool, { text: '-rf a b', count: 3 });
    expect(output.stdout).toBe('count=3|x-rf a by|');
  });

  it('leaves an optional group out when its placeholder has no value, and keeps it when it has one', async () => {
    const tool = echo({ command: ['printf', '%s|', '{text}', ['-n', '{count}']] });
    expect((await callTool(tool, { text: 'a' })).stdout).toBe('a|');
    expect((await callTool(tool, { text: 'a', count: 5 })).stdout).toBe('a|-n|5|');
  });

  it('fails as tool.invalid_input when a required placeholder has no value', async () => {
    const tool = echo({ command: ['printf', '%s|', '{count}'] });
    const error = await rejection(callTool(tool, { text: 'a' }));
    expect(error.code).toBe('tool.invalid_input');
    expect(error.data).toMatchObject({ field: 'count' });
  });

  it('runs in cwd, a directory inside root', async () => {
    mkdirSync(join(root, 'sub'));
    const tool = commandTool({
      name: 'where',
      description: 'Prints the working directory',
      input: { type: 'object', properties: {} },
      command: ['pwd'],
      root,
      cwd: 'sub',
    });
    expect((await callTool(tool, {})).stdout).toBe(`${join(root, 'sub')}\n`);
  });

  it('treats a non-zero exit code as tool.failed, with the stderr tail and the exit code as data', async () => {
    const tool = commandTool({
      name: 'failing',
      description: 'Fails',
      input: { type: 'object', properties: {} },
      command: ['sh', '-c', 'echo partial; echo "fatal: not a git repository" >&2; exit 128'],
      root,
    });
    const error = await rejection(callTool(tool, {}));
    expect(error.code).toBe('tool.failed');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('sh exited with code 128');
    expect(error.data).toEqual({
      exitCode: 128,
      stdout: 'partial\n',
      stderr: 'fatal: not a git repository\n',
    });
  });

  it('treats the exit codes listed in successExitCodes as success', async () => {
    writeFileSync(join(root, 'notes.txt'), 'alpha\nbeta\n');
    const tool = commandTool({
      name: 'search',
      description: 'Searches notes',
      input: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
      command: ['grep', '-e', '{pattern:allow-dash}', 'notes.txt'],
      root,
      successExitCodes: [0, 1],
    });
    expect(await callTool(tool, { pattern: 'gamma' })).toEqual({ exitCode: 1, stdout: '', stderr: '' });
    expect((await callTool(tool, { pattern: 'bet' })).stdout).toBe('beta\n');
  });

  it('reports a program that is not installed as tool.unavailable, not retryable', async () => {
    const tool = echo({ command: ['keel-no-such-program', '{text}'] });
    const error = await rejection(callTool(tool, { text: 'a' }));
    expect(error.code).toBe('tool.unavailable');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('keel-no-such-program not found');
  });
});

describe('commandTool: environment', () => {
  const SECRET = 'KEEL_TEST_SECRET_TOKEN';

  beforeEach(() => {
    process.env[SECRET] = 'sk-secret-value';
  });

  afterEach(() => {
    delete process.env[SECRET];
  });

  function printEnvironment(extra: Partial<CommandToolOptions<unknown>> = {}) {
    return commandTool({
      name: 'print_env',
      description: 'Prints the environment',
      input: { type: 'object', properties: {} },
      command: ['env'],
      root,
      ...extra,
    });
  }

  it('passes PATH and HOME but not the secrets of keel’s own environment', async () => {
    const { stdout } = await callTool(printEnvironment(), {});
    expect(stdout).toContain(`PATH=${process.env.PATH}\n`);
    expect(stdout).not.toContain(SECRET);
    expect(stdout).not.toContain('sk-secret-value');
  });

  it('passes a variable listed in inheritEnv, and the ones set in env', async () => {
    const tool = printEnvironment({ inheritEnv: ['PATH', SECRET], env: { GIT_PAGER: 'cat' } });
    const lines = (await callTool(tool, {})).stdout.trim().split('\n').sort();
    expect(lines).toEqual([`${SECRET}=sk-secret-value`, 'GIT_PAGER=cat', `PATH=${process.env.PATH}`].sort());
  });
});

describe('commandTool: options are checked at creation', () => {
  const base = {
    name: 'checked',
    description: 'Checked',
    input: textInput,
    command: ['printf', '{text}'],
  };

  it.each([
    [{ command: [] }, 'command must be a non-empty array'],
    [{ command: ['{text}'] }, 'command[0] must be the program as a fixed'],
    [{ command: ['printf', '{missing}'] }, 'placeholder {missing} names no property'],
    [{ command: ['printf', '{text:shell}'] }, 'unknown placeholder kind "shell"'],
    [{ command: ['printf', ['-n']] }, 'optional group without a placeholder'],
    [{ timeoutMs: 0 }, 'timeoutMs must be an integer of milliseconds'],
    [{ maxOutputBytes: 1.5 }, 'maxOutputBytes must be an integer of bytes'],
    [{ env: { 'BAD-NAME': 'x' } }, 'env has an invalid name'],
    [{ inheritEnv: 'PATH' }, 'inheritEnv must be an array'],
    [{ successExitCodes: [] }, 'successExitCodes must be a non-empty array'],
    [{ cwd: '/definitely/not/here' }, 'is not an existing directory'],
    [{ timeoutMS: 5 }, 'did you mean timeoutMs?'],
    [{ limits: { cpuSecond: 1 } }, 'did you mean cpuSeconds?'],
    [{ limits: { openFiles: 2 } }, 'limits.openFiles must be an integer of at least 3'],
    [{ user: { uid: -1, gid: 0 } }, 'user must be { uid, gid }'],
  ])('refuses %j', (extra, message) => {
    let thrown: unknown;
    try {
      commandTool({ ...base, root, ...extra } as CommandToolOptions<unknown>);
    } catch (error) {
      thrown = error;
    }
    expect(KeelError.isInstance(thrown) && thrown.code).toBe('config.invalid');
    expect((thrown as Error).message).toContain(message);
  });

  it('reads {{ and }} as literal braces, and braces that open no placeholder as themselves', async () => {
    const tool = commandTool({ ...base, root, command: ['printf', '{{%s}} { %s} {', '{text}', '{{text}}'] });
    expect((await callTool(tool, { text: 'x' })).stdout).toBe('{x} { {text}} {');
  });
});
