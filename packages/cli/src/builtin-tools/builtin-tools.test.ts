import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError, type Tool, type ToolContext } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateArithmetic } from './arithmetic.js';
import { builtinTools } from './builtin-tools.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-tools-'));
const agentDirectory = join(directory, 'agent');
mkdirSync(agentDirectory);
writeFileSync(join(agentDirectory, 'notes.md'), 'hello');
writeFileSync(join(directory, 'secret.txt'), 'do not read');
symlinkSync(join(directory, 'secret.txt'), join(agentDirectory, 'link.txt'));
mkdirSync(join(agentDirectory, 'docs'));
writeFileSync(join(agentDirectory, 'docs', 'guide.md'), 'guide');
symlinkSync('notes.md', join(agentDirectory, 'inner-link.md'));
symlinkSync('docs', join(agentDirectory, 'docs-link'));
symlinkSync(directory, join(agentDirectory, 'up'));
writeFileSync(join(agentDirectory, 'big.txt'), 'x'.repeat(64 * 1024 + 1));
execFileSync('mkfifo', [join(agentDirectory, 'pipe')]);
const socketServer = createServer();
await new Promise<void>((resolve) => socketServer.listen(join(agentDirectory, 'socket'), resolve));
afterAll(async () => {
  await new Promise((resolve) => socketServer.close(resolve));
  rmSync(directory, { recursive: true, force: true });
});

const tools = builtinTools({
  filesDirectory: agentDirectory,
  outboxPath: join(directory, '.keel', 'outbox.jsonl'),
});
const context: ToolContext = {
  signal: new AbortController().signal,
  idempotencyKey: 'run:1:0',
  runId: 'run',
  step: 1,
  callIndex: 0,
  attempt: 1,
};

async function call(name: string, input: unknown, from: Map<string, Tool> = tools): Promise<unknown> {
  const selected = from.get(name) as Tool;
  const validation = await selected.validate(input);
  if (!validation.success) throw new Error(JSON.stringify(validation.issues));
  return selected.execute(validation.value, context);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.catch((caught: unknown) => caught);
  return KeelError.isInstance(error) ? error.code : `not a KeelError: ${String(error)}`;
}

describe.each(['descriptors', 'top-level'] as const)('read_file (confined by %s)', (confinement) => {
  const confined = builtinTools({
    filesDirectory: agentDirectory,
    outboxPath: join(directory, '.keel', 'outbox.jsonl'),
    confinement,
  });
  const read = (input: { path: string }) => call('read_file', input, confined);

  it('reads a file below the agent directory', async () => {
    expect(await read({ path: 'notes.md' })).toEqual({ path: 'notes.md', content: 'hello' });
  });

  if (confinement === 'descriptors') {
    it('reads a file in a subdirectory, and gives its path as asked', async () => {
      expect(await read({ path: './docs//guide.md' })).toEqual({ path: 'docs/guide.md', content: 'guide' });
    });
  } else {
    it('refuses a file in a subdirectory, saying why', async () => {
      const error = await read({ path: 'docs/guide.md' }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        code: 'tool.permission_denied',
        message: expect.stringMatching(/reads only files directly in the agent's directory/),
      });
    });
  }

  it.each([
    ['a .. escape', '../secret.txt', 'tool.permission_denied'],
    ['a .. escape that comes back', 'docs/../notes.md', 'tool.permission_denied'],
    ['an absolute path', '/etc/passwd', 'tool.permission_denied'],
    ['a symbolic link out', 'link.txt', 'tool.permission_denied'],
    ['a symbolic link that stays inside', 'inner-link.md', 'tool.permission_denied'],
    ['a path through a symbolic link to a directory inside', 'docs-link/guide.md', 'tool.permission_denied'],
    ['a path through a symbolic link to a directory outside', 'up/secret.txt', 'tool.permission_denied'],
    ['a missing file', 'missing.md', 'tool.invalid_input'],
    [
      'a file below a file',
      'notes.md/inner',
      confinement === 'descriptors' ? 'tool.invalid_input' : 'tool.permission_denied',
    ],
    ['a NUL byte', 'notes.md\u0000.png', 'tool.invalid_input'],
    ['a directory', 'docs', 'tool.invalid_input'],
    ["the agent's directory itself", '.', 'tool.invalid_input'],
    ['a named pipe (FIFO), without blocking', 'pipe', 'tool.permission_denied'],
    ['a socket', 'socket', 'tool.permission_denied'],
    ['a file over 64 KB', 'big.txt', 'tool.invalid_input'],
  ])('refuses %s', async (_label, path, code) => {
    expect(await codeOf(read({ path }))).toBe(code);
  });

  it('says what kind of file it refused', async () => {
    const error = await read({ path: 'pipe' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'tool.permission_denied', data: { path: 'pipe', fileType: 'fifo' } });
    const link = await read({ path: 'inner-link.md' }).catch((caught: unknown) => caught);
    expect(link).toMatchObject({ data: { path: 'inner-link.md', fileType: 'symbolic link' } });
  });

  it('refuses a device', async () => {
    const devices = builtinTools({
      filesDirectory: '/dev',
      outboxPath: join(directory, 'outbox.jsonl'),
      confinement,
    });
    const error = await call('read_file', { path: 'null' }, devices).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'tool.permission_denied', data: { fileType: 'character device' } });
  });
});

describe('built-in tools', () => {
  it('gives the same weather for the same city', async () => {
    const first = (await call('get_weather', { city: 'Paris' })) as {
      conditions: string;
      temperatureC: number;
    };
    const second = (await call('get_weather', { city: 'paris ' })) as {
      conditions: string;
      temperatureC: number;
    };
    expect([second.conditions, second.temperatureC]).toEqual([first.conditions, first.temperatureC]);
  });

  it('asks approval for urgent tickets only', async () => {
    const ticket = tools.get('create_ticket')!;
    const needsApproval = ticket.needsApproval as (input: unknown) => boolean;
    expect(needsApproval({ title: 'x', priority: 'urgent' })).toBe(true);
    expect(needsApproval({ title: 'x' })).toBe(false);
    expect(await call('create_ticket', { title: 'Printer on fire' })).toMatchObject({
      title: 'Printer on fire',
    });
  });

  it('reconciles a ticket by its idempotency key: found in the outbox, or not', async () => {
    const ticket = tools.get('create_ticket')!;
    const key = `reconcile-${Date.now()}:1:0`;
    const signal = new AbortController().signal;
    expect(await ticket.reconcile!({ title: 'Lost answer' }, { idempotencyKey: key, signal })).toEqual({
      happened: false,
    });
    const opened = await ticket.execute({ title: 'Lost answer', priority: 'low' }, {
      signal,
      idempotencyKey: key,
      runId: 'reconcile',
      step: 1,
      callIndex: 0,
      attempt: 1,
    } as ToolContext);
    expect(await ticket.reconcile!({ title: 'Lost answer' }, { idempotencyKey: key, signal })).toEqual({
      happened: true,
      output: opened,
    });
  });
});

describe('evaluateArithmetic', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-4 + 10 % 3', -3],
    ['1.5e2 / 3', 50],
  ])('evaluates %s', (expression, value) => {
    expect(evaluateArithmetic(expression)).toBe(value);
  });

  it.each(['2 +', 'process.exit()', '1 / 0', '((((1', '9 ^ 9 ^ 9', `${'('.repeat(60)}1${')'.repeat(60)}`])(
    'rejects %s with tool.invalid_input',
    (expression) => {
      expect(() => evaluateArithmetic(expression)).toThrow(
        expect.objectContaining({ code: 'tool.invalid_input' }),
      );
    },
  );
});
