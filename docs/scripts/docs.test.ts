// The documentation site builds (VitePress fails the build on a dead link, its default: the config must not turn it
// off), with a page per error code, every command of the CLI's table, every section of the agent-file loader, and a
// heading in the API reference for every public export of every package entry point (the runtime names of each
// entry, and the type names of @keel/core's surface lists). New codes, commands, fields and exports are checked by
// being there. It builds the whole site (`node docs/scripts/generate.mjs --build`, after `npm run build`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AGENT_FILE_SECTIONS } from '../../packages/agent-file/src/fields.js';
import { COMMANDS } from '../../packages/cli/src/commands/command-table.js';
import { ERROR_CODES } from '../../packages/core/src/errors/codes.js';
import { publishedPackages, REPOSITORY_ROOT } from '../../scripts/workspace-packages.js';

const DOCS = join(REPOSITORY_ROOT, 'docs');
let build: { status: number | null; output: string } = { status: null, output: '' };

beforeAll(() => {
  const result = spawnSync(process.execPath, [join(DOCS, 'scripts', 'generate.mjs'), '--build'], {
    cwd: REPOSITORY_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  build = { status: result.status, output: `${result.stdout}${result.stderr}` };
}, 1_200_000);

/** The API page of an entry point: `packages/core/src/testing/index.ts` is docs/api/core/src/testing.md. */
function apiPage(source: string): string {
  return join(DOCS, 'api', `${source.replace(/^packages\//, '').replace(/\/index\.ts$/, '')}.md`);
}

function surfaceTypeNames(subpath: string): string[] {
  const file = join(REPOSITORY_ROOT, 'packages', 'core', 'surface', `${subpath}.txt`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('type '))
    .map((line) => line.slice('type '.length).trim());
}

describe('the documentation site', () => {
  it('builds, dead links refused', () => {
    expect(build.output).not.toMatch(/dead link/i);
    expect(build.status, build.output.slice(-4000)).toBe(0);
    expect(existsSync(join(DOCS, '.vitepress', 'dist', 'index.html'))).toBe(true);
    expect(readFileSync(join(DOCS, '.vitepress', 'config.mts'), 'utf8')).not.toContain('ignoreDeadLinks');
    expect(build.output, 'every code and field described').not.toMatch(/^docs: .* has no description/m);
  });

  it('has a page per error code', () => {
    for (const code of Object.keys(ERROR_CODES)) {
      expect(existsSync(join(DOCS, '.vitepress', 'dist', 'reference', 'errors', `${code}.html`)), code).toBe(
        true,
      );
    }
  });

  it('documents every command of the CLI table and every section of the agent-file loader', () => {
    const cli = readFileSync(join(DOCS, 'reference', 'cli.md'), 'utf8');
    for (const command of COMMANDS) expect(cli).toContain(`## keel ${command.name}\n`);
    const agentFile = readFileSync(join(DOCS, 'reference', 'agent-file.md'), 'utf8');
    for (const section of AGENT_FILE_SECTIONS) {
      for (const field of section.fields) expect(agentFile).toContain(`| \`${field}\` |`);
    }
  });

  it('has an API entry for every public export', { timeout: 120_000 }, async () => {
    const missing: string[] = [];
    for (const entry of publishedPackages()) {
      for (const [key, target] of Object.entries(entry.manifest.exports ?? {})) {
        const specifier = key === '.' ? entry.manifest.name : `${entry.manifest.name}/${key.slice(2)}`;
        const source = join(
          entry.folder,
          String(target.types)
            .replace(/^\.\/dist\//, 'src/')
            .replace(/\.d\.ts$/, '.ts'),
        );
        const page = apiPage(source);
        // Markdown escapes `_` in headings (DEFAULT\_PREFIX); a deprecated name is struck through (~~NAME~~).
        const text = existsSync(page) ? readFileSync(page, 'utf8').replace(/\\_/g, '_') : '';
        const module = (await import(join(REPOSITORY_ROOT, source))) as Record<string, unknown>;
        const names = [
          ...Object.keys(module),
          ...(entry.folder === 'packages/core' ? surfaceTypeNames(key === '.' ? 'root' : key.slice(2)) : []),
        ];
        for (const name of names) {
          if (!new RegExp(`^#{2,4} (~~)?${name.replace(/\$/g, '\\$')}(~~)?(\\\\<|\\(|$)`, 'm').test(text))
            missing.push(`${specifier}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
