// What a stranger gets from npm: every published package packed with `npm pack`, installed from the tarballs into a
// fresh project outside the workspace (under the system's temporary folder), a TypeScript program type-checked
// against the installed declarations (strict, skipLibCheck false) and run offline on the simulated provider, a
// CommonJS file that requires the packages, and the installed `keel` binary. Third-party dependencies come from npm's
// cache (filled by `npm ci`), or the registry when the cache lacks one. A package added under packages/ is packed,
// installed and imported by being there.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedPackages, REPOSITORY_ROOT } from './workspace-packages.js';

const packages = publishedPackages();
const workspaceRequire = createRequire(join(REPOSITORY_ROOT, 'package.json'));
const versionOf = (name: string) =>
  (JSON.parse(readFileSync(workspaceRequire.resolve(`${name}/package.json`), 'utf8')) as { version: string })
    .version;

let root = '';
let project = '';

/** The import specifier of every public entry point: each package's `exports` keys. */
function entryPoints(): string[] {
  return packages.flatMap(({ manifest }) =>
    Object.keys(manifest.exports ?? { '.': {} }).map((key) =>
      key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`,
    ),
  );
}

const run = (command: string, argv: string[], cwd: string) =>
  execFileSync(command, argv, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

const PROGRAM = `import { agent, constant, type KeelError, tool } from '@keel/core';
import { simulated } from '@keel/simulated';
import { SqliteRunStore } from '@keel/store-sqlite';
import { z } from 'zod';
import { entryPoints } from './entries.js';

const model = simulated({ faults: { sequence: ['server_error'] } });
const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input: z.object({ city: z.string() }),
  idempotent: true,
  async execute({ city }) {
    return { city, temperatureC: 18, sky: 'clear' };
  },
});
const store = new SqliteRunStore(process.argv[2] ?? ':memory:');
const assistant = agent({ model, tools: [weather], store, retry: { delay: constant(1) } });
const result = await assistant.run('What is the weather in Paris?');
await model.close();
await store.close();
const error: KeelError | undefined = result.error;
console.log(JSON.stringify({
  status: result.status,
  retries: result.report.retries.total,
  errorCode: error?.code,
  entryPoints: entryPoints.length,
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    // DOM: the MCP SDK's declarations (under @keel/mcp) name fetch's HeadersInit, which @types/node 20 lacks.
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    outDir: 'dist',
  },
  include: ['src/**/*.ts'],
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'keel-pack-install-'));
  const tarballs = join(root, 'tarballs');
  project = join(root, 'project');
  mkdirSync(tarballs);
  mkdirSync(join(project, 'src'), { recursive: true });
  run(
    'npm',
    [
      'pack',
      '--ignore-scripts',
      '--pack-destination',
      tarballs,
      ...packages.flatMap((entry) => ['--workspace', entry.folder]),
    ],
    REPOSITORY_ROOT,
  );
  const dependencies: Record<string, string> = {};
  for (const file of readdirSync(tarballs)) {
    const entry = packages.find(
      ({ manifest }) => file === `${manifest.name.slice(1).replace('/', '-')}-${manifest.version}.tgz`,
    );
    if (entry !== undefined) dependencies[entry.manifest.name] = `file:../tarballs/${file}`;
  }
  // The tools of the program, at the workspace's versions so npm's cache has them.
  for (const name of ['zod', 'typescript', '@types/node']) dependencies[name] = versionOf(name);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'keel-adopter', private: true, type: 'module', dependencies }, null, 2)}\n`,
  );
  // --ignore-scripts: better-sqlite3 would build from source without its prebuilt binary's host; the workspace's
  // own binary (the same version, built for this machine) is copied in below instead.
  run(
    'npm',
    ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    project,
  );
  const binary = join('build', 'Release', 'better_sqlite3.node');
  const source = join(workspaceRequire.resolve('better-sqlite3/package.json'), '..', binary);
  const target = join(project, 'node_modules', 'better-sqlite3', binary);
  mkdirSync(join(target, '..'), { recursive: true });
  copyFileSync(source, target);

  const specifiers = entryPoints();
  writeFileSync(
    join(project, 'src', 'entries.ts'),
    `${specifiers.map((specifier, index) => `import * as entry${index} from '${specifier}';`).join('\n')}\n\n` +
      `/** Every public entry point, imported whole so its declarations are type-checked. */\n` +
      `export const entryPoints: readonly object[] = [${specifiers.map((_, index) => `entry${index}`).join(', ')}];\n`,
  );
  writeFileSync(join(project, 'src', 'main.ts'), PROGRAM);
  writeFileSync(join(project, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
}, 300_000);

afterAll(() => {
  if (root !== '') rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('the packed packages, installed outside the workspace', () => {
  it('installs every package from its tarball, none from the workspace', () => {
    for (const { manifest } of packages) {
      const installed = join(project, 'node_modules', ...manifest.name.split('/'));
      expect(existsSync(join(installed, 'package.json')), manifest.name).toBe(true);
      expect(existsSync(join(installed, 'src')), `${manifest.name} ships no src/`).toBe(false);
    }
    expect(project.startsWith(REPOSITORY_ROOT)).toBe(false);
  });

  it('type-checks a program importing every entry point (strict, skipLibCheck false), then runs it offline', {
    timeout: 180_000,
  }, () => {
    const compiled = (() => {
      try {
        return run(
          process.execPath,
          [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
          project,
        );
      } catch (error) {
        const failure = error as { stdout?: string; stderr?: string };
        throw new Error(`tsc failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
      }
    })();
    expect(compiled).toBe('');
    const output = run(process.execPath, ['dist/main.js', join(root, 'keel.db')], project);
    const result = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(result).toMatchObject({ status: 'completed', retries: 1, entryPoints: entryPoints().length });
  });

  it('loads from CommonJS with require() (every root entry)', { timeout: 60_000 }, () => {
    const names = packages.map(({ manifest }) => manifest.name);
    writeFileSync(
      join(project, 'check.cjs'),
      `const names = ${JSON.stringify(names)};\n` +
        `for (const name of names) { const loaded = require(name); if (Object.keys(loaded).length === 0) throw new Error(name + ' exports nothing'); }\n` +
        `console.log(names.length);\n`,
    );
    expect(run(process.execPath, ['check.cjs'], project).trim()).toBe(String(names.length));
  });

  it('installs the keel binary', { timeout: 60_000 }, () => {
    const version = packages.find(({ manifest }) => manifest.name === '@keel/cli')?.manifest.version;
    expect(run(join(project, 'node_modules', '.bin', 'keel'), ['--version'], project).trim()).toContain(
      String(version),
    );
  });
});
