import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
afterAll(() => rmSync(directory, { recursive: true, force: true }));

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

async function call(name: string, input: unknown): Promise<unknown> {
  const selected = tools.get(name) as Tool;
  const validation = await selected.validate(input);
  if (!validation.success) throw new Error(JSON.stringify(validation.issues));
  return selected.execute(validation.value, context);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.catch((caught: unknown) => caught);
  return KeelError.isInstance(error) ? error.code : `not a KeelError: ${String(error)}`;
}

describe('built-in tools', () => {
  it('reads a file below the agent directory', async () => {
    expect(await call('read_file', { path: 'notes.md' })).toEqual({ path: 'notes.md', content: 'hello' });
  });

  it.each([
    ['a .. escape', '../secret.txt', 'tool.permission_denied'],
    ['an absolute path', '/etc/passwd', 'tool.permission_denied'],
    ['a symbolic link out', 'link.txt', 'tool.permission_denied'],
    ['a missing file', 'missing.md', 'tool.invalid_input'],
    ['a NUL byte', 'notes.md\u0000.png', 'tool.invalid_input'],
  ])('refuses %s', async (_label, path, code) => {
    expect(await codeOf(call('read_file', { path }))).toBe(code);
  });

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
