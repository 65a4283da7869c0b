// README truth: its TypeScript blocks are the examples' regions (which CI type-checks and runs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from './workspace-packages.js';

const SCRIPT = join(REPOSITORY_ROOT, 'scripts', 'sync-snippets.mjs');
const sync = (...argv: string[]) => spawnSync(process.execPath, [SCRIPT, ...argv], { encoding: 'utf8' });

describe('README.md code blocks', () => {
  it('every ```ts block is marked and equals its example region', () => {
    const readme = readFileSync(join(REPOSITORY_ROOT, 'README.md'), 'utf8');
    expect(readme.match(/^<!-- example: /gm)?.length ?? 0).toBeGreaterThan(3);
    const result = sync('--check');
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
