// README truth: its TypeScript blocks are the examples' regions (which CI type-checks and runs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from './workspace-packages.js';

const SCRIPT = join(REPOSITORY_ROOT, 'scripts', 'sync-snippets.mjs');
const sync = (...argv: string[]) => spawnSync(process.execPath, [SCRIPT, ...argv], { encoding: 'utf8' });

/** Pages whose TypeScript blocks are examples' regions: the README and the site's hand-written pages that show code. */
const PAGES_WITH_EXAMPLES = ['README.md', 'docs/getting-started.md', 'docs/concepts.md'];

describe('README.md code blocks', () => {
  it('every ```ts block of the README and the site pages is marked and equals its example region', () => {
    for (const page of PAGES_WITH_EXAMPLES) {
      const text = readFileSync(join(REPOSITORY_ROOT, page), 'utf8');
      expect(text.match(/^<!-- example: /gm)?.length ?? 0, page).toBeGreaterThan(1);
      // The site's own include syntax shows a whole file when a region's end is unnamed: pages use markers instead.
      expect(text, page).not.toMatch(/^<<< /m);
    }
    const result = sync('--check'); // its default: the same pages
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('--check fails on a block that drifted or has no marker, and a plain run rewrites the block', () => {
    const folder = mkdtempSync(join(tmpdir(), 'keel-snippets-'));
    const file = join(folder, 'doc.md');
    const drifted = `# t\n\n<!-- example: examples/fallback-chain.ts#fallback-chain -->\n\`\`\`ts\nconst old = 1;\n\`\`\`\n\n\`\`\`ts\nunmarked();\n\`\`\`\n`;
    writeFileSync(file, drifted);
    const checked = sync('--check', file);
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain('doc.md:4: differs from examples/fallback-chain.ts#fallback-chain');
    expect(checked.stderr).toContain('doc.md:8: a ```ts block with no <!-- example: FILE#REGION --> marker');
    sync(file);
    expect(readFileSync(file, 'utf8')).toContain('const assistant = agent({');
    expect(readFileSync(file, 'utf8')).not.toContain('const old = 1;');
  });
});

describe('README.md command list', () => {
  const readme = readFileSync(join(REPOSITORY_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The command line'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  // Continuation lines (indented) belong to the command above them; one line may hold several commands.
  const lines = block.replace(/\n\s+(?=\S)/g, ' ').split('\n');
  const segments = lines
    .flatMap((line) => line.split(/\s+(?=keel )/))
    .filter((text) => text.startsWith('keel '));

  it('names every command of the CLI, with only the options each one takes', async () => {
    const { COMMANDS } = await import('../packages/cli/src/commands/command-table.js');
    const names = COMMANDS.map((command) => command.name).sort((left, right) => right.length - left.length);
    const problems: string[] = [];
    for (const command of COMMANDS) {
      if (
        !segments.some(
          (segment) => segment.startsWith(`keel ${command.name} `) || segment === `keel ${command.name}`,
        )
      ) {
        problems.push(`keel ${command.name} is missing`);
      }
    }
    for (const segment of segments) {
      if (segment.startsWith('keel --')) continue;
      const name = names.find((candidate) => segment.startsWith(`keel ${candidate}`));
      const command = COMMANDS.find((entry) => entry.name === name);
      if (command === undefined) {
        problems.push(`${segment}: no such command`);
        continue;
      }
      for (const option of segment.match(/--[a-z][a-z-]*/g) ?? []) {
        if (!Object.hasOwn(command.options, option.slice(2)) && option !== '--help') {
          problems.push(`keel ${command.name} takes no ${option}`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('is the synopsis of every command, as keel --help lists it', async () => {
    const { COMMANDS } = await import('../packages/cli/src/commands/command-table.js');
    const { commandSynopsis } = await import('../packages/cli/src/commands/synopsis.js');
    expect(block.trimEnd()).toBe(commandSynopsis(COMMANDS));
  }, 60_000);

  it('says which commands take --json and --store', async () => {
    const { COMMANDS } = await import('../packages/cli/src/commands/command-table.js');
    expect(
      COMMANDS.filter((command) => !Object.hasOwn(command.options, 'json')).map((command) => command.name),
    ).toEqual([]);
    const withoutStore = COMMANDS.filter((command) => !Object.hasOwn(command.options, 'store')).map(
      (command) => command.name,
    );
    expect(withoutStore).toEqual(['chaos']);
    expect(readme).toContain(
      'Every command takes `--json`, and every command but `keel chaos` (which stores nothing) takes `--store`.',
    );
  }, 60_000);
});
