// Agent files that name agent files: `tools: - agent:` and `handoffs:`, each child read whole, with the parent's
// consent and no more.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeelError } from '@keel/core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgentFile } from './agent-file.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-agents-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function write(name: string, lines: string[]): string {
  const path = join(directory, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function refusal(path: string, options = {}): Promise<KeelError> {
  try {
    await loadAgentFile(path, ['create_ticket'], options);
  } catch (error) {
    if (KeelError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

describe('agent files naming agent files', () => {
  it('reads agent: tools and handoffs:, each child checked whole', async () => {
    write('research.yaml', ['name: research', 'model: simulated:sim-primary']);
    write('support.yaml', ['name: support', 'tools: [create_ticket]']);
    const path = write('triage.yaml', [
      'name: triage',
      'tools:',
      '  - agent: ./research.yaml',
      '  - agent: { file: ./research.yaml, name: deep_research, description: Digs deeper }',
      'handoffs:',
      '  - ./support.yaml',
    ]);
    const file = await loadAgentFile(path, ['create_ticket']);
    expect(file.tools).toMatchObject([
      { kind: 'agent', name: 'research', field: 'tools[0]', file: { name: 'research' } },
      { kind: 'agent', name: 'deep_research', description: 'Digs deeper' },
    ]);
    expect(file.handoffs).toMatchObject([
      { field: 'handoffs[0]', file: { name: 'support', tools: [{ name: 'create_ticket' }] } },
    ]);
  });

  it('refuses a child file that would do more than the person running keel allowed (a child cannot widen consent)', async () => {
    write('runner.yaml', [
      'name: runner',
      'tools:',
      '  - command: { name: run_ls, description: lists, argv: [ls], input: { type: object } }',
    ]);
    const path = write('parent-of-runner.yaml', ['name: parent', 'handoffs: [./runner.yaml]']);
    const error = await refusal(path);
    expect(error.code).toBe('config.invalid');
    expect(error.message).toMatch(/handoffs\[0\].*runner\.yaml.*--allow-programs/s);
    // With the consent given, parent and child are accepted.
    await expect(loadAgentFile(path, ['create_ticket'], { allowPrograms: true })).resolves.toMatchObject({
      name: 'parent',
    });
  });

  it('refuses a loop of agent files, and a missing file, at the field that names it', async () => {
    write('loop-a.yaml', ['name: a', 'handoffs: [./loop-b.yaml]']);
    const b = write('loop-b.yaml', ['name: b', 'tools:', '  - agent: ./loop-a.yaml']);
    expect((await refusal(b)).message).toMatch(/cannot loop/);
    const missing = write('missing.yaml', ['name: m', 'handoffs: [./nowhere.yaml]']);
    expect((await refusal(missing)).message).toMatch(/handoffs\[0\].*cannot read/s);
  });
});
