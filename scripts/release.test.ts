// The release script moves every package to one version with matching @keel/* ranges, writes a changelog entry
// from the notes, writes nothing without --write, and never publishes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from './workspace-packages.js';

const SCRIPT = join(REPOSITORY_ROOT, 'scripts', 'release.mjs');
const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function readJson<T = Manifest>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** A small workspace: core, openai (depends on core), a private bench, a lockfile, two notes. */
function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'keel-release-'));
  folders.push(root);
  writeJson(join(root, 'package.json'), { name: 'w', private: true, workspaces: ['packages/*', 'bench'] });
  writeJson(join(root, 'packages/core/package.json'), { name: '@keel/core', version: '0.1.0' });
  writeJson(join(root, 'packages/openai/package.json'), {
    name: '@keel/openai',
    version: '0.1.0',
    dependencies: { '@keel/core': '^0.1.0', yaml: '^2.9.1' },
    devDependencies: { '@keel/core': '0.1.0' },
  });
  writeJson(join(root, 'bench/package.json'), {
    name: '@keel/bench',
    version: '0.1.0',
    private: true,
    dependencies: { '@keel/openai': '^0.1.0' },
  });
  writeJson(join(root, 'package-lock.json'), {
    lockfileVersion: 3,
    packages: {
      '': { name: 'w' },
      'packages/core': { name: '@keel/core', version: '0.1.0' },
      'packages/openai': { name: '@keel/openai', version: '0.1.0', dependencies: { '@keel/core': '^0.1.0' } },
      'node_modules/yaml': { version: '2.9.1' },
    },
  });
  mkdirSync(join(root, 'changes'));
  writeFileSync(join(root, 'changes', 'a.md'), 'core: retries honour Retry-After-Ms\n');
  writeFileSync(join(root, 'changes', 'b.md'), 'openai: the Responses API\nwith its own stream reader\n');
  return root;
}

function release(root: string, ...argv: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...argv, '--root', root, '--date', '2026-11-27'], {
    encoding: 'utf8',
  });
}

describe('scripts/release.mjs', () => {
  it('writes nothing without --write, and says what it would do', () => {
    const root = workspace();
    const before = readFileSync(join(root, 'packages/openai/package.json'), 'utf8');
    const result = release(root, 'minor');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('dry run');
    expect(result.stdout).toContain('0.1.0 -> 0.2.0');
    expect(readFileSync(join(root, 'packages/openai/package.json'), 'utf8')).toBe(before);
    expect(existsSync(join(root, 'CHANGELOG.md'))).toBe(false);
    expect(existsSync(join(root, 'changes', 'a.md'))).toBe(true);
  });

  it('--write moves every package, its @keel/* ranges and the lockfile to one version, and writes the changelog', () => {
    const root = workspace();
    const result = release(root, '1.0.0', '--write');
    expect(result.status, result.stderr).toBe(0);
    const openai = readJson(join(root, 'packages/openai/package.json'));
    expect(openai.version).toBe('1.0.0');
    expect(openai.dependencies).toEqual({ '@keel/core': '^1.0.0', yaml: '^2.9.1' });
    expect(openai.devDependencies).toEqual({ '@keel/core': '^1.0.0' });
    expect(readJson(join(root, 'packages/core/package.json')).version).toBe('1.0.0');
    expect(readJson(join(root, 'bench/package.json')).dependencies).toEqual({ '@keel/openai': '^1.0.0' });
    const lock = readJson<{ packages: Record<string, Manifest> }>(join(root, 'package-lock.json'));
    expect(lock.packages['packages/openai']).toMatchObject({
      version: '1.0.0',
      dependencies: { '@keel/core': '^1.0.0' },
    });
    expect(lock.packages['node_modules/yaml']?.version).toBe('2.9.1');
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain('## 1.0.0 (2026-11-27)');
    expect(changelog).toContain('### core\n\n- retries honour Retry-After-Ms');
    expect(changelog).toContain('### openai\n\n- the Responses API\n  with its own stream reader');
    expect(existsSync(join(root, 'changes', 'a.md'))).toBe(false);

    writeFileSync(join(root, 'changes', 'c.md'), 'cli: keel --version\n');
    expect(release(root, 'patch', '--write').status).toBe(0);
    const second = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    expect(second.indexOf('## 1.0.1')).toBeLessThan(second.indexOf('## 1.0.0'));
    expect(second.match(/^# Changelog/gm)).toHaveLength(1);
  });

  it('refuses a version that is not after the current one, and an unknown option', () => {
    const root = workspace();
    expect(release(root, '0.0.9').stderr).toContain('is not after the current version 0.1.0');
    expect(release(root, 'minor', '--publish').stderr).toContain('unknown option --publish');
  });

  it('falls back on the commit subjects since the last tag when there are no notes', () => {
    const root = workspace();
    rmSync(join(root, 'changes'), { recursive: true });
    const git = (...argv: string[]) => execFileSync('git', argv, { cwd: root, stdio: 'ignore' });
    git('init', '-q');
    git(
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'core: old',
    );
    git('tag', 'v0.1.0');
    git(
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'mcp: new',
    );
    const result = release(root, 'patch');
    expect(result.stdout).toContain('### mcp\n\n- new');
    expect(result.stdout).not.toContain('- old');
  });

  it('never runs npm publish', () => {
    const source = readFileSync(SCRIPT, 'utf8');
    expect(source).not.toMatch(/execFileSync\(\s*['"]npm/);
    expect(source).not.toMatch(/spawn(Sync)?\(/);
  });
});
